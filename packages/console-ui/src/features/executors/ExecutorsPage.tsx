/** `/ns/$namespace/executors`: executors by state; drain (with the preview of its moves), undrain, remove. */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function ExecutorsPage() {
  return <PlaceholderPage title="app.name" />;
}
