/** `/audit`: the audit log, filtered by user, namespace, job and time. */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function AuditPage() {
  return <PlaceholderPage title="app.name" />;
}
