/** The job editor: create (`/ns/$namespace/jobs/new`) and edit (`/ns/$namespace/jobs/$job/edit`). */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function JobEditorPage() {
  return <PlaceholderPage title="app.name" />;
}
