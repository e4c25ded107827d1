import { describe, expect, it } from 'vitest';
import { checkCommand, checkCommandNode, parseCommand } from './command.js';

const at = 1_700_000_000_000;

describe('checkCommand', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a run of every item', { kind: 'run', requestedAt: at }],
    ['a run of some items with a parameter', { kind: 'run', items: [0, 2], param: 'x=1', requestedAt: at }],
    ['a downstream run', { kind: 'run', fireTime: at - 1000, triggeredBy: 'up-stream_1', requestedAt: at }],
    ['a run with who asked', { kind: 'run', requestedAt: at, requestedBy: 'alice' }],
    ['a stop of every item', { kind: 'stop', requestedAt: at }],
    ['a stop of one item', { kind: 'stop', items: [3], requestedAt: at }],
    ['a failover', { kind: 'failover', items: [1], fireTime: at - 5000, requestedAt: at }],
    ['a repair', { kind: 'repair', items: [0], requestedAt: at }],
    ['an empty parameter', { kind: 'run', param: '', requestedAt: 0 }],
  ])('accepts %s', (_label, input) => {
    const r = checkCommand(input);
    expect(r).toEqual({ ok: true, value: input });
    expect(parseCommand(input)).toEqual(input);
  });

  it.each<[string, unknown, string, string]>([
    ['not an object', 'run', '', 'type'],
    ['an array', [{ kind: 'run' }], '', 'type'],
    ['null', null, '', 'type'],
    ['no kind', { requestedAt: at }, 'kind', 'required'],
    ['an unknown kind', { kind: 'restart', requestedAt: at }, 'kind', 'one-of'],
    ['a kind that is not a string', { kind: 1, requestedAt: at }, 'kind', 'one-of'],
    ['no requestedAt', { kind: 'run' }, 'requestedAt', 'required'],
    ['a requestedAt in seconds with a fraction', { kind: 'stop', requestedAt: 1.5 }, 'requestedAt', 'type'],
    ['a negative requestedAt', { kind: 'run', requestedAt: -1 }, 'requestedAt', 'minimum'],
    ['items that are not a list', { kind: 'run', items: 1, requestedAt: at }, 'items', 'type'],
    ['an empty item list', { kind: 'stop', items: [], requestedAt: at }, 'items', 'min-items'],
    ['a negative item', { kind: 'run', items: [-1], requestedAt: at }, 'items[0]', 'minimum'],
    ['a fractional item', { kind: 'run', items: [0, 1.5], requestedAt: at }, 'items[1]', 'type'],
    ['an item beyond any job', { kind: 'run', items: [100_000], requestedAt: at }, 'items[0]', 'maximum'],
    ['a repeated item', { kind: 'run', items: [1, 1], requestedAt: at }, 'items', 'unique-items'],
    ['a parameter that is not a string', { kind: 'run', param: 5, requestedAt: at }, 'param', 'type'],
    ['a parameter that is too long', { kind: 'run', param: 'x'.repeat(65_537), requestedAt: at }, 'param', 'max-length'],
    ['a triggeredBy that is no job name', { kind: 'run', triggeredBy: '../x', requestedAt: at }, 'triggeredBy', 'pattern'],
    ['an empty requestedBy', { kind: 'run', requestedAt: at, requestedBy: '' }, 'requestedBy', 'min-length'],
    ['a parameter on a stop', { kind: 'stop', param: 'x', requestedAt: at }, 'param', 'unknown-field'],
    ['an unknown field', { kind: 'run', requestedAt: at, force: true }, 'force', 'unknown-field'],
    ['a failover without items', { kind: 'failover', fireTime: at, requestedAt: at }, 'items', 'required'],
    ['a failover without a fire time', { kind: 'failover', items: [0], requestedAt: at }, 'fireTime', 'required'],
    ['a repair without items', { kind: 'repair', requestedAt: at }, 'items', 'required'],
    ['a repair with a fire time', { kind: 'repair', items: [0], fireTime: at, requestedAt: at }, 'fireTime', 'unknown-field'],
  ])('refuses %s, naming the field and the rule', (_label, input, field, rule) => {
    const r = checkCommand(input);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toContainEqual(expect.objectContaining({ field, rule }));
    for (const i of r.issues) expect(i.message).toMatch(i.field ? new RegExp(`^${i.field.replace(/[[\]]/g, '\\$&')}: `) : /^value: /);
    expect(() => parseCommand(input)).toThrow(expect.objectContaining({ code: 'validation' }));
  });

  it('lists every problem of a command at once', () => {
    const r = checkCommand({ kind: 'failover', items: [-1], extra: 1 });
    expect(!r.ok && r.issues.map((i) => `${i.field}:${i.rule}`).sort()).toEqual(['extra:unknown-field', 'fireTime:required', 'items[0]:minimum', 'requestedAt:required']);
  });
});

describe('checkCommandNode', () => {
  it.each<[string, string, Record<string, unknown>, unknown]>([
    ['a run-now', 'cmd-0000000007', { kind: 'run', requestedAt: at }, { form: 'sequential', sequence: 7 }],
    ['a stop', 'cmd-0000000008', { kind: 'stop', items: [1], requestedAt: at }, { form: 'sequential', sequence: 8 }],
    ['a downstream run', `downstream-up-1-${at}`, { kind: 'run', fireTime: at, triggeredBy: 'up-1', requestedAt: at }, { form: 'downstream', upstream: 'up-1', fireTime: at }],
    ['a failover', `failover-3-${at}`, { kind: 'failover', items: [3], fireTime: at, requestedAt: at }, { form: 'failover', item: 3, fireTime: at }],
    ['a repair', 'repair-4', { kind: 'repair', items: [4], requestedAt: at }, { form: 'repair', item: 4 }],
  ])('reads %s', (_label, name, data, parts) => {
    expect(checkCommandNode(name, data)).toEqual({ ok: true, value: { name: parts, command: data } });
  });

  it.each<[string, string, unknown, string, string]>([
    ['a name of no known form', 'bogus', { kind: 'run', requestedAt: at }, 'name', 'form'],
    ['a sequential name without its sequence', 'cmd-', { kind: 'run', requestedAt: at }, 'name', 'form'],
    ['a valid name with invalid data', 'cmd-0000000001', { kind: 'run' }, 'requestedAt', 'required'],
    ['a failover in a sequential node', 'cmd-0000000001', { kind: 'failover', items: [0], fireTime: at, requestedAt: at }, 'kind', 'name-form'],
    ['a stop in a downstream node', `downstream-up-${at}`, { kind: 'stop', requestedAt: at }, 'kind', 'name-form'],
    ['a run in a repair node', 'repair-0', { kind: 'run', requestedAt: at }, 'kind', 'name-form'],
    ['a downstream run of another fire', `downstream-up-${at}`, { kind: 'run', fireTime: at + 1, requestedAt: at }, 'fireTime', 'name-form'],
    ['a downstream run without its fire time', `downstream-up-${at}`, { kind: 'run', requestedAt: at }, 'fireTime', 'required'],
    ['a failover of another fire', `failover-0-${at}`, { kind: 'failover', items: [0], fireTime: 1, requestedAt: at }, 'fireTime', 'name-form'],
  ])('refuses %s', (_label, name, data, field, rule) => {
    const r = checkCommandNode(name, data);
    expect(!r.ok && r.issues).toContainEqual(expect.objectContaining({ field, rule }));
  });
});
