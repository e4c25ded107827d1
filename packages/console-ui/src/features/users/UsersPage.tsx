/** `/users` (admin): users and their roles. */
import { PlaceholderPage } from '../placeholder/PlaceholderPage';

export function UsersPage() {
  return <PlaceholderPage title="app.name" />;
}
