/**
 * `/users` (administrators; anyone else is told so): every user with the admin flag and the roles
 * per namespace; create a user, edit the admin flag and roles, reset a password, delete (with a
 * confirmation). Updates are compare-and-set from the version read: when someone changed the user
 * meanwhile, the dialog shows the user as it is now and asks again.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { UserAnswer } from '@orrery/console/api-types';
import { useId, useState, type FormEvent } from 'react';
import { isApiError } from '../../api/client';
import { NAMESPACE_ROLES, type NamespaceRole } from '../../api/types';
import { sessionKeys, useSession } from '../../auth/session';
import { useI18n } from '../../i18n/I18nProvider';
import { Badge } from '../../ui/Badge';
import { Empty, ErrorState, Loading, Notice, useErrorMessage } from '../../ui/states';
import { Dialog } from '../../ui/Dialog';
import { namespacesQuery } from '../namespaces/queries';
import { PASSWORD_MAX, PASSWORD_MIN, USER_NAME_PATTERN, createUser, deleteUser, rolesOf, rowsOf, updateUser, usersKeys, usersQuery, type RoleRow } from './queries';
import './users.css';

/** The dialog open on the page. */
type Open = { kind: 'edit' | 'password' | 'delete'; user: UserAnswer };

/** Roles shown in a row before "+N more". */
const ROLES_SHOWN = 6;

export function UsersPage() {
  const { t } = useI18n();
  const { can } = useSession();
  if (!can('administer')) {
    return (
      <section aria-labelledby="users-title">
        <div className="page-header">
          <h1 id="users-title">{t('users.title')}</h1>
        </div>
        <Empty>{t('users.forbidden')}</Empty>
      </section>
    );
  }
  return <UsersView />;
}

function UsersView() {
  const { t, formatTime } = useI18n();
  const { principal } = useSession();
  const users = useQuery(usersQuery());
  const [creating, setCreating] = useState(false);
  const [open, setOpen] = useState<Open>();
  const [notice, setNotice] = useState<string>();
  const done = (text: string) => {
    setOpen(undefined);
    setNotice(text);
  };

  return (
    <section aria-labelledby="users-title" className="users-page">
      <div className="page-header">
        <h1 id="users-title">{t('users.title')}</h1>
        {!creating && (
          <button
            type="button"
            className="primary"
            onClick={() => {
              setNotice(undefined);
              setCreating(true);
            }}
          >
            {t('users.new')}
          </button>
        )}
      </div>
      {notice && <Notice>{notice}</Notice>}
      {creating && (
        <CreateUserForm
          onCancel={() => setCreating(false)}
          onCreated={(user) => {
            setCreating(false);
            setNotice(t('users.created', { name: user.name }));
          }}
        />
      )}
      {users.isPending ? (
        <Loading />
      ) : users.isError ? (
        <ErrorState error={users.error} onRetry={() => void users.refetch()} />
      ) : users.data.length === 0 ? (
        <Empty>{t('users.empty')}</Empty>
      ) : (
        <div className="table-scroll" role="region" aria-labelledby="users-title" tabIndex={0}>
          <table className="data users-table">
            <thead>
              <tr>
                <th scope="col">{t('users.col.name')}</th>
                <th scope="col">{t('users.col.admin')}</th>
                <th scope="col">{t('users.col.roles')}</th>
                <th scope="col">{t('users.col.created')}</th>
                <th scope="col">{t('users.col.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((user) => {
                const roles = rowsOf(user.roles);
                return (
                  <tr key={user.name}>
                    <th scope="row">
                      {user.name} {user.name === principal.user && <Badge tone="info">{t('users.you')}</Badge>}
                    </th>
                    <td>{user.admin ? <Badge tone="warn">{t('role.admin')}</Badge> : <span className="muted">—</span>}</td>
                    <td>
                      {roles.length === 0 ? (
                        <span className="muted">{user.admin ? t('users.rolesAdmin') : t('users.noRoles')}</span>
                      ) : (
                        <ul className="role-chips" aria-label={t('users.rolesOf', { name: user.name })} title={roles.map((r) => `${r.namespace}: ${t(`role.${r.role}`)}`).join('\n')}>
                          {roles.slice(0, ROLES_SHOWN).map((r) => (
                            <li key={r.namespace} className={`role-chip role-${r.role}`}>
                              <span className="ns">{r.namespace}</span> {t(`role.${r.role}`)}
                            </li>
                          ))}
                          {roles.length > ROLES_SHOWN && <li className="role-chip more">{t('users.moreRoles', { count: roles.length - ROLES_SHOWN })}</li>}
                        </ul>
                      )}
                    </td>
                    <td className="nowrap">
                      <time dateTime={new Date(user.createdAt).toISOString()} title={String(user.createdAt)}>
                        {formatTime(user.createdAt)}
                      </time>
                    </td>
                    <td>
                      <span className="row-actions" role="group" aria-label={t('users.rowActions', { name: user.name })}>
                        <button type="button" onClick={() => setOpen({ kind: 'edit', user })}>
                          {t('users.edit')}
                        </button>
                        <button type="button" onClick={() => setOpen({ kind: 'password', user })}>
                          {t('users.resetPassword')}
                        </button>
                        <button type="button" className="danger" onClick={() => setOpen({ kind: 'delete', user })}>
                          {t('users.delete')}
                        </button>
                      </span>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {open?.kind === 'edit' && <EditUserModal user={open.user} onClose={() => setOpen(undefined)} onSaved={(user) => done(t('users.saved', { name: user.name }))} />}
      {open?.kind === 'password' && <PasswordModal user={open.user} onClose={() => setOpen(undefined)} onSaved={(user) => done(t('users.passwordReset', { name: user.name }))} />}
      {open?.kind === 'delete' && <DeleteUserModal user={open.user} onClose={() => setOpen(undefined)} onDeleted={(name) => done(t('users.deleted', { name }))} />}
    </section>
  );
}

/** What the user list and the session need after a write. */
function useRefresh() {
  const queryClient = useQueryClient();
  return () => Promise.all([queryClient.invalidateQueries({ queryKey: usersKeys.all }), queryClient.invalidateQueries({ queryKey: sessionKeys.all })]);
}

/** The user a 409 `conflict` answer holds as it is now (`details.current`), if it does. */
function currentOf(error: unknown): UserAnswer | undefined {
  if (!isApiError(error, 'conflict')) return undefined;
  const current = error.details.current;
  return typeof current === 'object' && current !== null && 'name' in current && 'version' in current && 'roles' in current ? (current as UserAnswer) : undefined;
}

function CreateUserForm({ onCancel, onCreated }: { onCancel: () => void; onCreated: (user: UserAnswer) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const refresh = useRefresh();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [admin, setAdmin] = useState(false);
  const [rows, setRows] = useState<RoleRow[]>([]);
  const [tried, setTried] = useState(false);
  const create = useMutation({
    gcTime: 0, // the variables hold a password: not kept once settled
    mutationFn: createUser,
    onSuccess: (user) => {
      void refresh();
      onCreated(user);
    },
  });
  const roles = rolesOf(rows);
  const mismatch = repeat !== '' && repeat !== password;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    if (!roles.ok || password !== repeat) return;
    create.mutate({ name: name.trim(), password, admin, roles: roles.roles });
  };
  const issues = (field: string) => (isApiError(create.error) ? create.error.issuesFor(field) : []);
  const fieldIssues = [...issues('name'), ...issues('password'), ...issues('roles')];
  return (
    <form className="card form user-form" onSubmit={submit} aria-labelledby={`${id}-title`} noValidate={false}>
      <h2 id={`${id}-title`}>{t('users.createTitle')}</h2>
      <label htmlFor={`${id}-name`}>{t('users.name')}</label>
      <input id={`${id}-name`} required maxLength={64} pattern={USER_NAME_PATTERN} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} aria-describedby={`${id}-name-help`} autoFocus />
      <small id={`${id}-name-help`}>{t('users.nameHelp')}</small>
      <label htmlFor={`${id}-password`}>{t('users.password')}</label>
      <input id={`${id}-password`} type="password" required minLength={PASSWORD_MIN} maxLength={PASSWORD_MAX} autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} aria-describedby={`${id}-password-help`} />
      <small id={`${id}-password-help`}>{t('users.passwordHelp', { min: PASSWORD_MIN, max: PASSWORD_MAX })}</small>
      <label htmlFor={`${id}-repeat`}>{t('users.passwordRepeat')}</label>
      <input id={`${id}-repeat`} type="password" required autoComplete="new-password" value={repeat} onChange={(e) => setRepeat(e.target.value)} aria-invalid={mismatch || undefined} aria-describedby={mismatch ? `${id}-mismatch` : undefined} />
      {mismatch && (
        <small id={`${id}-mismatch`} className="field-error">
          {t('users.passwordMismatch')}
        </small>
      )}
      <label className="check" htmlFor={`${id}-admin`}>
        <input id={`${id}-admin`} type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
        {t('users.adminFlag')}
      </label>
      <small>{t('users.adminHelp')}</small>
      <RolesEditor rows={rows} onChange={setRows} problems={tried && !roles.ok ? roles.problems : []} />
      {fieldIssues.map((issue) => (
        <p key={`${issue.field}/${issue.rule}`} className="field-error" role="alert">
          {issue.message}
        </p>
      ))}
      {create.isError && fieldIssues.length === 0 && (
        <p className="field-error" role="alert">
          {message(create.error)}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? t('users.creating') : t('users.create')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('users.cancel')}
        </button>
      </div>
    </form>
  );
}

/** Namespace → role rows: add, change, remove; problems (blank, malformed, repeated) under their row. */
function RolesEditor({ rows, onChange, problems }: { rows: readonly RoleRow[]; onChange: (rows: RoleRow[]) => void; problems: readonly { index: number; kind: 'blank' | 'format' | 'duplicate' }[] }) {
  const { t } = useI18n();
  const id = useId();
  const namespaces = useQuery(namespacesQuery());
  const set = (index: number, row: Partial<RoleRow>) => onChange(rows.map((r, i) => (i === index ? { ...r, ...row } : r)));
  const listId = `${id}-namespaces`;
  return (
    <fieldset className="roles-editor">
      <legend>{t('users.roles')}</legend>
      {rows.length === 0 && <p className="muted">{t('users.rolesNone')}</p>}
      <datalist id={listId}>
        {(namespaces.data ?? []).map((ns) => (
          <option key={ns.name} value={ns.name} />
        ))}
      </datalist>
      <ol className="role-rows">
        {rows.map((row, index) => {
          const problem = problems.find((p) => p.index === index);
          const n = index + 1;
          return (
            <li key={index}>
              <label htmlFor={`${id}-ns-${index}`} className="visually-hidden">
                {t('users.roleNamespace', { n })}
              </label>
              <input
                id={`${id}-ns-${index}`}
                list={listId}
                placeholder={t('users.namespacePlaceholder')}
                value={row.namespace}
                maxLength={128}
                onChange={(e) => set(index, { namespace: e.target.value })}
                aria-invalid={problem ? true : undefined}
                aria-describedby={problem ? `${id}-problem-${index}` : undefined}
              />
              <label htmlFor={`${id}-role-${index}`} className="visually-hidden">
                {t('users.roleRole', { n })}
              </label>
              <select id={`${id}-role-${index}`} value={row.role} onChange={(e) => set(index, { role: e.target.value as NamespaceRole })}>
                {NAMESPACE_ROLES.map((role) => (
                  <option key={role} value={role}>
                    {t(`role.${role}`)}
                  </option>
                ))}
              </select>
              <button type="button" className="link" aria-label={t('users.removeRole', { n, namespace: row.namespace || '—' })} onClick={() => onChange(rows.filter((_, i) => i !== index))}>
                {t('users.remove')}
              </button>
              {problem && (
                <small id={`${id}-problem-${index}`} className="field-error">
                  {t(`users.roleProblem.${problem.kind}`)}
                </small>
              )}
            </li>
          );
        })}
      </ol>
      <button type="button" onClick={() => onChange([...rows, { namespace: '', role: 'viewer' }])}>
        {t('users.addRole')}
      </button>
      <small className="muted">{t('users.rolesHelp')}</small>
    </fieldset>
  );
}

function EditUserModal({ user, onClose, onSaved }: { user: UserAnswer; onClose: () => void; onSaved: (user: UserAnswer) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const refresh = useRefresh();
  const { principal } = useSession();
  const [base, setBase] = useState(user);
  const [admin, setAdmin] = useState(user.admin);
  const [rows, setRows] = useState(() => rowsOf(user.roles));
  const [tried, setTried] = useState(false);
  const [conflict, setConflict] = useState(false);
  const save = useMutation({
    mutationFn: (change: Parameters<typeof updateUser>[1]) => updateUser(user.name, change),
    onSuccess: (saved) => {
      void refresh();
      onSaved(saved);
    },
    onError: (error) => {
      const current = currentOf(error);
      if (!current) return;
      // Someone changed the user meanwhile: show it as it is now, and let the admin decide again.
      setBase(current);
      setAdmin(current.admin);
      setRows(rowsOf(current.roles));
      setConflict(true);
    },
  });
  const roles = rolesOf(rows);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    setConflict(false);
    if (!roles.ok) return;
    save.mutate({ version: base.version, admin, roles: roles.roles });
  };
  const self = user.name === principal.user;
  return (
    <Dialog
      title={t('users.editTitle', { name: user.name })}
      onClose={onClose}
      busy={save.isPending}
      actions={
        <>
          <button type="button" onClick={onClose} disabled={save.isPending}>
            {t('users.cancel')}
          </button>
          <button type="submit" form={`${id}-form`} className="primary" disabled={save.isPending}>
            {save.isPending ? t('users.saving') : t('users.save')}
          </button>
        </>
      }
    >
      <form id={`${id}-form`} onSubmit={submit} className="user-form">
        {conflict ? (
          <Notice tone="error">{t('users.conflict', { name: user.name })}</Notice>
        ) : (
          save.isError && (
            <p className="field-error" role="alert">
              {message(save.error)}
            </p>
          )
        )}
        <label className="check" htmlFor={`${id}-admin`}>
          <input id={`${id}-admin`} type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          {t('users.adminFlag')}
        </label>
        {self && base.admin && !admin && <p className="field-warning">{t('users.selfUnadmin')}</p>}
        <RolesEditor rows={rows} onChange={setRows} problems={tried && !roles.ok ? roles.problems : []} />
      </form>
    </Dialog>
  );
}

function PasswordModal({ user, onClose, onSaved }: { user: UserAnswer; onClose: () => void; onSaved: (user: UserAnswer) => void }) {
  const { t } = useI18n();
  const id = useId();
  const message = useErrorMessage();
  const refresh = useRefresh();
  const [version, setVersion] = useState(user.version);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [tried, setTried] = useState(false);
  const save = useMutation({
    gcTime: 0, // the variables hold a password: not kept once settled
    mutationFn: (change: Parameters<typeof updateUser>[1]) => updateUser(user.name, change),
    onSuccess: (saved) => {
      void refresh();
      onSaved(saved);
    },
    onError: (error) => {
      const current = currentOf(error);
      if (current) setVersion(current.version);
    },
  });
  const short = password.length < PASSWORD_MIN;
  const mismatch = password !== repeat;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    if (short || mismatch) return;
    save.mutate({ version, password });
  };
  return (
    <Dialog
      title={t('users.passwordTitle', { name: user.name })}
      onClose={onClose}
      busy={save.isPending}
      actions={
        <>
          <button type="button" onClick={onClose} disabled={save.isPending}>
            {t('users.cancel')}
          </button>
          <button type="submit" form={`${id}-form`} className="primary" disabled={save.isPending}>
            {save.isPending ? t('users.saving') : t('users.setPassword')}
          </button>
        </>
      }
    >
      <form id={`${id}-form`} onSubmit={submit} className="user-form" noValidate>
        <p>{t('users.passwordIntro', { name: user.name })}</p>
        <div className="field">
          <label htmlFor={`${id}-password`}>{t('users.newPassword')}</label>
          <input
            id={`${id}-password`}
            type="password"
            autoComplete="new-password"
            maxLength={PASSWORD_MAX}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-invalid={(tried && short) || undefined}
            aria-describedby={`${id}-help`}
          />
          <small id={`${id}-help`} className={tried && short ? 'field-error' : undefined}>
            {t('users.passwordHelp', { min: PASSWORD_MIN, max: PASSWORD_MAX })}
          </small>
        </div>
        <div className="field">
          <label htmlFor={`${id}-repeat`}>{t('users.passwordRepeat')}</label>
          <input id={`${id}-repeat`} type="password" autoComplete="new-password" value={repeat} onChange={(e) => setRepeat(e.target.value)} aria-invalid={(tried && mismatch) || undefined} aria-describedby={tried && mismatch ? `${id}-mismatch` : undefined} />
          {tried && mismatch && (
            <small id={`${id}-mismatch`} className="field-error">
              {t('users.passwordMismatch')}
            </small>
          )}
        </div>
        {save.isError && (
          <p className="field-error" role="alert">
            {currentOf(save.error) ? t('users.passwordConflict') : message(save.error)}
          </p>
        )}
      </form>
    </Dialog>
  );
}

function DeleteUserModal({ user, onClose, onDeleted }: { user: UserAnswer; onClose: () => void; onDeleted: (name: string) => void }) {
  const { t } = useI18n();
  const message = useErrorMessage();
  const refresh = useRefresh();
  const { principal } = useSession();
  const [version, setVersion] = useState(user.version);
  const remove = useMutation({
    mutationFn: () => deleteUser(user.name, version),
    onSuccess: () => {
      void refresh();
      onDeleted(user.name);
    },
    onError: (error) => {
      // Changed meanwhile: the list is read again, and a second confirmation deletes it as it is now.
      const current = currentOf(error);
      if (current) {
        setVersion(current.version);
        void refresh();
      }
    },
  });
  return (
    <Dialog
      title={t('users.deleteTitle', { name: user.name })}
      role="alertdialog"
      onClose={onClose}
      busy={remove.isPending}
      actions={
        <>
          <button type="button" onClick={onClose} disabled={remove.isPending}>
            {t('users.cancel')}
          </button>
          <button type="button" className="primary danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
            {remove.isPending ? t('users.deleting') : t('users.deleteConfirm')}
          </button>
        </>
      }
    >
      <p>{t('users.deleteIntro', { name: user.name })}</p>
      {user.name === principal.user && <p className="field-warning">{t('users.deleteSelf')}</p>}
      {remove.isError && (
        <p className="field-error" role="alert">
          {currentOf(remove.error) ? t('users.deleteConflict', { name: user.name }) : message(remove.error)}
        </p>
      )}
    </Dialog>
  );
}
