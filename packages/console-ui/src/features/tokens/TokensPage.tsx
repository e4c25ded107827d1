/** `/tokens`: the signed-in user's API tokens: create (shown once), revoke. */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function TokensPage() {
  return <PlaceholderPage title="app.name" />;
}
