/** `/ns/$namespace/assignment`: the executors × jobs matrix of shard counts, with load per executor. */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function AssignmentPage() {
  return <PlaceholderPage title="app.name" />;
}
