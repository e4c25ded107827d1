/** `/ns/$namespace/jobs/$job`: shards, the runs timeline, run history, the log viewer, config history, charts. */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function JobDetailPage() {
  return <PlaceholderPage title="app.name" />;
}
