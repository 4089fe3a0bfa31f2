import { AppConfigSchema } from '../../src/config/model.js';
import { BROWSER_ACCESS_REFERENCE } from './reference-browser.js';
import type { SchemaNode } from '../../src/config/schema-node.js';

/**
 * Renders `docs/configuration.md` and `schemas/config.schema.json` from the TypeBox model, so the
 * documentation cannot drift from what the loader accepts. `scripts/generate-config-reference.ts`
 * writes the files; a unit test compares the committed files with a fresh rendering.
 */

export const CONFIG_REFERENCE_MARKDOWN_PATH = 'docs/configuration.md';
export const CONFIG_JSON_SCHEMA_PATH = 'schemas/config.schema.json';

export function renderConfigReference(): { markdown: string; jsonSchema: string } {
  return { markdown: renderMarkdown(), jsonSchema: `${JSON.stringify(renderJsonSchema(), null, 2)}\n` };
}

const ROOT = AppConfigSchema as unknown as SchemaNode;

// ---------------------------------------------------------------------------------------------
// JSON Schema

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The schema of the *file*: the model describes the configuration after defaults, so a field
 * with a default is listed as required there; in the file it is optional.
 */
function renderJsonSchema(): Json {
  const model = JSON.parse(JSON.stringify(AppConfigSchema)) as Json;
  const file = relaxDefaults(model);
  if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new Error('config model is not an object');
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'aviso-ts configuration',
    ...file,
    description:
      'aviso-ts configuration file (config/config.yaml). Generated from src/config/model.ts; see docs/configuration.md. ' +
      'Canonical types are shown; outside notification_schema the loader also accepts numeric strings for integers, ' +
      'yes/no/on/off/1/0 for booleans and numbers for strings. Unknown top-level keys are ignored.',
  };
}

function relaxDefaults(node: Json): Json {
  if (Array.isArray(node)) return node.map(relaxDefaults);
  if (typeof node !== 'object' || node === null) return node;
  const result: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) result[key] = relaxDefaults(value);
  const properties = node.properties;
  const required = node.required;
  if (Array.isArray(required) && typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    const stillRequired = required.filter((name) => {
      const property = typeof name === 'string' ? properties[name] : undefined;
      return !(typeof property === 'object' && property !== null && !Array.isArray(property) && 'default' in property);
    });
    if (stillRequired.length > 0) result.required = stillRequired;
    else delete result.required;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Markdown

/** Placeholder shown for operator-chosen map keys. */
const KEY_PLACEHOLDERS: Readonly<Record<string, string>> = {
  notification_schema: '<event_type>',
  identifier: '<field>',
};

function renderMarkdown(): string {
  const sections: string[] = [];
  renderSection('', ROOT, undefined, sections);
  return `${PREAMBLE.trim()}\n\n${BROWSER_ACCESS_REFERENCE.trim()}\n\n## Field reference\n\n${FIELD_REFERENCE_INTRO.trim()}\n\n${sections.join('\n')}`;
}

function renderSection(path: string, node: SchemaNode, title: string | undefined, out: string[]): void {
  const properties = node.properties ?? {};
  const heading = path === '' ? 'Top level' : `\`${path}\`${title === undefined ? '' : ` (${title})`}`;
  const lines = [`### ${heading}`, ''];
  if (node.description !== undefined) lines.push(cell(node.description), '');
  lines.push('| Field | Type | Default | Description |', '|---|---|---|---|');
  for (const [key, property] of Object.entries(properties)) {
    lines.push(
      `| \`${key}\` | ${typeText(property)} | ${defaultText(node, key, property)} | ${cell(property.description ?? (property.const !== undefined ? 'Selects this handler.' : ''))} |`,
    );
  }
  out.push(`${lines.join('\n')}\n`);

  for (const [key, property] of Object.entries(properties)) {
    const childPath = path === '' ? key : `${path}.${key}`;
    if (property.type === 'object' && property.properties !== undefined) {
      renderSection(childPath, property, undefined, out);
      continue;
    }
    const entry = mapEntry(property);
    if (entry === undefined) continue;
    const entryPath = `${childPath}.${KEY_PLACEHOLDERS[key] ?? '<key>'}`;
    const members = taggedMembers(entry);
    if (members !== undefined) {
      for (const [tag, member] of members) {
        renderSection(entryPath, { ...member, description: IDENTIFIER_RULE_INTRO }, `\`type: ${tag}\``, out);
      }
    } else if (entry.type === 'object' && entry.properties !== undefined) {
      renderSection(entryPath, entry, undefined, out);
    }
  }
}

function mapEntry(node: SchemaNode): SchemaNode | undefined {
  return node.patternProperties === undefined ? undefined : Object.values(node.patternProperties)[0];
}

function taggedMembers(node: SchemaNode): [string, SchemaNode][] | undefined {
  if (node.anyOf === undefined) return undefined;
  const members: [string, SchemaNode][] = [];
  for (const member of node.anyOf) {
    const tag = member.properties?.type?.const;
    if (typeof tag !== 'string') return undefined;
    members.push([tag, member]);
  }
  return members;
}

function typeText(node: SchemaNode): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the configuration schema's const values are strings and numbers
  if (node.const !== undefined) return `\`${String(node.const)}\``;
  if (node.anyOf !== undefined) {
    if (taggedMembers(node) !== undefined) return 'identifier rule (by `type`)';
    return node.anyOf.map(typeText).join(' \\| ');
  }
  if (node.enum !== undefined) return node.enum.map((value) => `\`${String(value)}\``).join(' \\| ');
  const entry = mapEntry(node);
  if (entry !== undefined) {
    return `map string → ${entry.type === 'object' && entry.properties !== undefined ? 'mapping (below)' : typeText(entry)}`;
  }
  switch (node.type) {
    case 'object':
      return 'section';
    case 'array': {
      const item = node.items === undefined ? 'any' : typeText(node.items);
      if (node.minItems !== undefined && node.minItems === node.maxItems) {
        return `list of ${node.minItems} × ${item}`;
      }
      return `list of ${item}`;
    }
    case 'integer': {
      const { minimum, maximum } = node;
      if (minimum !== undefined && maximum !== undefined) return `integer ${minimum}–${maximum}`;
      if (minimum === 0) return 'unsigned integer';
      if (minimum !== undefined) return `integer ≥ ${minimum}`;
      return 'integer';
    }
    default:
      return node.type ?? 'any';
  }
}

function defaultText(parent: SchemaNode, key: string, node: SchemaNode): string {
  if (node.default !== undefined) {
    const value = node.default;
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) {
      return node.properties !== undefined ? 'all defaults' : '`{}`';
    }
    return `\`${JSON.stringify(value)}\``;
  }
  return parent.required?.includes(key) ? '**required**' : '—';
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

const IDENTIFIER_RULE_INTRO =
  'An identifier rule, chosen by `type`. Strictly typed even in YAML (`required: "true"` is an error); any key not listed here is a load error.';

const FIELD_REFERENCE_INTRO = `
Generated from the TypeBox model (\`src/config/model.ts\`); the same model produces
\`schemas/config.schema.json\`. "Default" is **required** when a missing field is a load error,
"—" when the field is optional and has no default, and "all defaults" for a section that may be
left out entirely. Operator-chosen map keys are shown as \`<event_type>\`, \`<field>\` or \`<key>\`.
`;

const PREAMBLE = `
# Configuration

<!-- Generated by scripts/generate-config-reference.ts from src/config/model.ts (and its model-*.ts sections) and scripts/config-reference/reference.ts. Do not edit by hand: run the script. -->

aviso-ts reads one YAML (or JSON) configuration document, built from files and
\`AVISOSERVER_*\` environment variables, then checks it before anything listens. A configuration
error ends the process with exit status 1 and one line on stderr naming the field, for example
\`application.port: must be an integer between 0 and 65535, got 70000\`.

The shipped \`config/config.yaml\` is a working in-memory setup, so \`npm start\` runs with no
set-up; \`config/examples/jetstream.yaml\` is a commented production-like example.

## Where the configuration comes from

Sources, later ones overriding earlier ones:

1. \`./config/config.yaml\`, resolved against the working directory;
2. \`/etc/aviso_server/config.yaml\`;
3. \`$HOME/.aviso_server/config.yaml\`;
4. \`AVISOSERVER_*\` environment variables.

Every file of 1–3 that exists is read and merged (not "first found wins"); a missing one is
skipped silently. Mappings merge key by key, recursively; a scalar or a list in a later source
replaces the earlier value entirely (lists are never concatenated). An empty file contributes
nothing.

\`AVISOSERVER_CONFIG_FILE\` replaces files 1–3 with the single file it names (trimmed; a
relative path resolves against the working directory). Set but blank is an error
(\`AVISOSERVER_CONFIG_FILE is set but empty\`), and so is a path that is not an existing regular
file (\`AVISOSERVER_CONFIG_FILE: '<path>' is not an existing regular file\`). Environment
overrides still apply on top.

A file whose name ends in \`.json\` (any case) is parsed as JSON, anything else as YAML 1.2
(core schema: \`yes\`/\`no\` are strings, \`0001\` is the integer 1; duplicate keys and
multiple documents are syntax errors). The top level must be a mapping.

## Environment overrides

\`AVISOSERVER_<SEGMENT>[__<SEGMENT>…]\`: the prefix is matched case-insensitively, the rest is
lower-cased and split on \`__\` (two underscores) into a key path; a single \`_\` belongs to the
key name. The value replaces that leaf, or creates it together with any missing sections
(\`AVISOSERVER_METRICS__ENABLED=true\` alone creates \`metrics\`).

| Variable | Sets | Example |
|---|---|---|
| \`AVISOSERVER_APPLICATION__HOST\` | \`application.host\` | \`0.0.0.0\` |
| \`AVISOSERVER_APPLICATION__PORT\` | \`application.port\` | \`8000\` |
| \`AVISOSERVER_NOTIFICATION_BACKEND__KIND\` | \`notification_backend.kind\` | \`jetstream\` |
| \`AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL\` | \`notification_backend.jetstream.nats_url\` | \`nats://nats:4222\` |
| \`AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__TOKEN\` | \`notification_backend.jetstream.token\` | \`s3cret\` |
| \`AVISOSERVER_WATCH_ENDPOINT__REPLAY_BATCH_SIZE\` | \`watch_endpoint.replay_batch_size\` | \`200\` |
| \`AVISOSERVER_AUTH__ENABLED\` | \`auth.enabled\` | \`true\` |
| \`AVISOSERVER_AUTH__JWT_SECRET\` | \`auth.jwt_secret\` | \`secret\` |
| \`AVISOSERVER_METRICS__ENABLED\` | \`metrics.enabled\` | \`true\` |
| \`AVISOSERVER_METRICS__PORT\` | \`metrics.port\` | \`9090\` |
| \`AVISOSERVER_NOTIFICATION_SCHEMA_STRICT\` | \`notification_schema_strict\` | \`false\` |
| \`AVISOSERVER_LOGGING__LEVEL\` | \`logging.level\` | \`debug\` |

- An empty value is a value (the empty string), not "unset"; for a numeric field it is an error.
- Lists and maps may be given as a JSON literal, e.g.
  \`AVISOSERVER_AUTH__ADMIN_ROLES={"localrealm":["admin"]}\` or
  \`AVISOSERVER_NOTIFICATION_SCHEMA__MARS__TOPIC__KEY_ORDER=["class","date"]\`
  (an extension; the reference cannot set lists from the environment).
- Map keys chosen by the operator (realm names, event types) can only be addressed in lower case.
- \`AVISOSERVER_CONFIG_FILE\` is not a key. A name with an empty segment (\`AVISOSERVER_AUTH__\`)
  addresses nothing and is ignored. Shorter paths apply first, so
  \`AVISOSERVER_AUTH__ENABLED\` still applies after a variable that replaced \`auth\` as a whole.
- An unknown key follows the strictness of the section it lands in (below).
- \`NATS_TOKEN\` fills \`notification_backend.jetstream.token\` when the configuration has none
  (a blank \`NATS_TOKEN\` counts as unset).

## Value typing

Outside \`notification_schema\` (the settings sections and \`notification_schema_strict\`), YAML
scalars and environment values are converted to the field's type:

| Field type | Accepted | Otherwise |
|---|---|---|
| integer | a number, or a base-10 integer string (\`"8000"\`, \`"+5"\`); within the field's range | load error (\`-1\` for an unsigned field, \`8000.5\`, \`""\`, \`"abc"\`) |
| boolean | \`true\`/\`false\`, \`yes\`/\`no\`, \`on\`/\`off\`, \`1\`/\`0\`, any case | load error (\`maybe\`) |
| string | taken verbatim, not trimmed; numbers and booleans become their text | — |
| enumeration | the exact lower-case spelling listed in the tables below | load error (\`Direct\`) |

Inside \`notification_schema\` values written in a file are strictly typed (\`required: "true"\`
and \`max_length: "2"\` are errors, and a string field given a number asks to be quoted); values
set through the environment there are converted as above.

Everywhere, a declared field written as a YAML null (\`port:\` with no value) counts as absent.
Integers beyond 9007199254740991 in magnitude are rejected (JavaScript numbers cannot hold them
exactly), which caps the 64-bit fields \`max_messages\` and \`max_bytes\`.

## Unknown keys

| Location | Unknown keys |
|---|---|
| top level, \`application\`, \`logging\`, \`metrics\`, \`watch_endpoint\`, \`notification_endpoint\` | ignored |
| \`notification_backend\`, \`.in_memory\`, \`.jetstream\` | ignored (a typo silently keeps the default) |
| \`notification_schema.<event_type>\`, its \`topic\` and legacy \`endpoint\` | ignored (e.g. \`topic.separator\`) |
| \`auth\`, \`ecpds\` | **load error** (\`auth: unknown field(s): tokn\`) |
| \`notification_schema.<event_type>.auth\`, \`.payload\`, \`.storage_policy\` | **load error** |
| an identifier rule \`notification_schema.<event_type>.identifier.<field>\` | **load error**: only \`type\`, \`required\`, \`description\` and the handler's own fields |

\`storage_policy\` is strict although the reference ignores unknown keys there: a misspelt
\`retention_tme\` would silently keep data forever.

## Duration and size literals

A **duration** (\`jetstream.retention_time\`, \`storage_policy.retention_time\`) is an unsigned
integer followed by one unit, case-insensitive: \`s\` (seconds), \`m\` (minutes), \`h\`, \`d\`,
\`w\` (weeks); surrounding whitespace is ignored. \`50s\`, \`10m\`, \`10M\` (600 s), \`1h\`,
\`2d\`, \`1w\`. Not accepted: \`10\`, \`abc\`, \`10x\`, \`-5m\`, \`1h30m\`, \`10 m\`, \`ms\`, \`mo\`,
the empty string. Both retention settings must be greater than 0.

A **size** (\`storage_policy.max_size\`, \`in_memory.max_total_size\`) is an integer > 0 followed
by a case-sensitive unit: \`K\` = 10³, \`M\` = 10⁶, \`G\` = 10⁹, \`T\` = 10¹², \`Ki\` = 2¹⁰,
\`Mi\` = 2²⁰, \`Gi\` = 2³⁰, \`Ti\` = 2⁴⁰. \`100K\` = 100000, \`64Mi\` = 67108864. Not accepted: \`10\`,
\`0Mi\`, \`10m\`, \`abc\`.

## Startup validation

Checks run in three stages; the first failure stops the process.

**Stage A, loading** (one plain line on stderr): \`AVISOSERVER_CONFIG_FILE\` blank or not a file;
a YAML/JSON syntax error (\`<file>: YAML syntax error: <reason> at line L, column C\`); a missing
required field (\`application.port: required field is missing\`); a wrong type or a value out of
range (\`auth.enabled: must be a boolean (true/false, yes/no, on/off or 1/0), got "maybe"\`); an
invalid enumeration value (\`auth.mode: must be one of direct, trusted_proxy, got "Direct"\`); an
unknown key in a strict section (\`auth: unknown field(s): allowed_roles\`); an identifier rule
with an unknown \`type\` (\`…identifier.class.type: unknown type "Foo"; expected one of
StringHandler, …\`).

**Stage B, semantic checks** (logged at \`error\` with the event in brackets), in this order:

1. \`application\`: \`headers_timeout_ms\` ≤ \`request_timeout_ms\`; \`max_streams\` <
   \`max_connections\` (\`application.max_streams: must be less than application.max_connections
   (10000 >= 10000), so that streams leave connections for /health, /ready and notify\`, D44); each \`application.homepage\`
   link is an absolute \`http\`/\`https\` URL with a host, no user info and no whitespace
   (\`application.homepage.<key> must be an absolute HTTP(S) URL with a host and no embedded
   credentials\`; the value is not echoed); each \`application.additional_origins\` entry is an
   origin exactly as a browser sends it (the message names the form to write, as for CORS); each
   \`application.cors.allowed_origins\` entry is
   \`"*"\` or an origin exactly as a browser sends it (\`application.cors.allowed_origins[0]:
   "https://console.example.org/" is not an origin as browsers send it: write
   "https://console.example.org"\`); \`application.tls.cert_file\` / \`key_file\` (and \`ca_file\`
   when set) are not blank. Then, before anything listens, the TLS files are read and the key
   is checked against the certificate (\`application.tls.cert_file: cannot read <path>: no such
   file\`, \`application.tls.key_file: cannot read <path>: permission denied\`,
   \`application.tls: cannot use <cert> with <key>: <reason>\`; logged as \`startup.tls.load.failed\`).
2. \`notification_backend.kind\` is \`in_memory\` or \`jetstream\`
   (\`Unknown notification_backend kind: <kind>\`); with \`in_memory\`, \`max_history_per_topic\`
   and \`max_topics\` are > 0 and \`max_total_size\` parses and is at least
   4 × \`application.max_body_bytes\` + 8 KiB (1,056,768 bytes with the default body limit), so any
   notification notify accepts fits; with \`jetstream\`, \`retention_policy\` is \`limits\`
   (\`workqueue\` and \`interest\` would delete notifications replay needs).
3. Every \`topic.base\` matches \`[A-Za-z0-9][A-Za-z0-9_-]*\` (\`Schema '<event_type>' has invalid
   topic base: topic base must match [A-Za-z0-9][A-Za-z0-9_-]*\`), then topic bases are unique
   ignoring ASCII case (\`Schemas '<a>' and '<b>' both define topic base '<base>'\`: \`<a>\` is
   the schema listed first, \`<base>\` as the second one spells it).
4. Every \`topic.key_order\` entry is declared in \`identifier\`.
5. A \`storage_policy\` needs a \`topic\`; then every schema needs a \`topic\`.
6. \`storage_policy.retention_time\` parses and is > 0, \`max_size\` parses, \`max_messages\` > 0.
7. \`storage_policy\` fields are supported by the backend: none with \`in_memory\`, all with
   \`jetstream\` (\`Schema '<event_type>' storage_policy.<field> is not supported by backend '<kind>'\`).
8. Per schema: a PolygonHandler field is named \`polygon\` and a PointCloudHandler field
   \`point_cloud\`; at most one spatial field; a point-cloud schema declares no \`polygon\` identifier; \`max_points\` is
   1…10000 (\`field 'point_cloud' max_points must be between 1 and 10000, got <n>\`); \`point_cloud\`
   is not in \`key_order\`; a \`range\` has min ≤ max; \`max_historical_notifications\` is positive.
   A \`polygon\` listed in \`key_order\` is accepted with a warning
   (\`configuration.schema.spatial_key_order\`); watch/replay leave that subject position open.
   All of 1–8 log \`startup.configuration.validation.failed\`.
9. Global auth, when enabled [\`startup.auth.validation.failed\`]: no padded \`auth_o_tron_url\` /
   \`jwt_secret\`; \`timeout_ms\` > 0; \`admin_roles\` has a realm; no empty role list, no blank or
   padded realm or role; \`direct\` needs \`auth_o_tron_url\` and \`jwt_secret\`,
   \`trusted_proxy\` needs \`jwt_secret\`.
10. Stream plugins [\`startup.auth.plugin_validation.failed\`]: \`auth.plugins\` not empty, only
    \`ecpds\`, and \`auth.required: true\`.
11. Stream auth [\`startup.auth.stream_validation.failed\`]: \`read_roles\` / \`write_roles\` not
    \`{}\`, no empty list, no blank or padded realm or role; with global auth enabled,
    \`required: false\` with a role map is an error; with global auth disabled, \`required: true\`
    or any role map is an error.
12. Metrics, when enabled [\`startup.metrics.validation.failed\`]: \`port\` set, not 0, and not
    \`application.port\`.
13. ECPDS, when a stream lists it [\`startup.ecpds.validation.failed\`]: the section exists;
    \`servers\` non-empty, each an absolute \`https\` URL (\`http\` only for \`127.0.0.1\`,
    \`[::1]\`, \`localhost\`) without query or fragment; \`username\`, \`password\`,
    \`target_field\` not blank or padded; \`match_key\` without whitespace, \`/\` or NUL; the
    four limits > 0; \`match_key\` names a required identifier field of every plugin stream.
14. \`watch_endpoint\` [\`startup.configuration.validation.failed\`]:
    \`sse_heartbeat_interval_sec\`, \`connection_max_duration_sec\`, \`replay_batch_size\`,
    \`concurrent_notification_processing\`, \`max_historical_notifications\` and
    \`max_buffered_events\` are > 0 (\`replay_batch_delay_ms: 0\` means no pause).
15. \`idempotency\` [\`startup.configuration.validation.failed\`]: \`window\` parses and is
    1s to 24h (\`idempotency.window: must be between 1s and 24h, got '25h'\`);
    \`in_memory_max_keys\` > 0.
16. \`notification_endpoint\` [\`startup.configuration.validation.failed\`]: \`max_batch_items\`
    and \`max_batch_bytes\` are > 0.

Warnings logged at startup: \`configuration.schema_strict.explicit_disabled\` when
\`notification_schema_strict: false\` is set with a non-empty schema;
\`configuration.auth.admin_open\` when global auth is disabled (admin endpoints are then open
to anyone who can reach the server); \`configuration.schema.spatial_key_order\` as above;
\`configuration.setting.deprecated\` when \`notification_backend.jetstream.enable_auto_reconnect\`
is set (it is ignored).

**Stage C, when the JetStream backend starts** [\`startup.backend.initialization.failed\`]:
\`nats_url\` not blank; \`timeout_seconds\`, \`retry_attempts\`, \`reconnect_delay_ms\`,
\`publish_retry_attempts\`, \`publish_retry_base_delay_ms\`, \`live_gap_wait_ms\` > 0; \`retention_time\` parses and is
> 0; \`idempotency_bucket\` consists of letters, digits, \`_\` and \`-\`; then the connection must succeed within \`retry_attempts\`.

## Strict mode

\`notification_schema_strict\` unset means strict when \`notification_schema\` has at least one
entry and generic otherwise. \`true\` with no schema rejects every event type; \`false\` accepts
unknown event types (generic mode) and logs a warning when schemas exist.

## Reloading without a restart

\`SIGHUP\` (\`kill -HUP <pid>\`) or \`POST /api/v1/admin/reload\` (admin role when auth is on; see
[api.md](api.md#post-apiv1adminreload)) re-reads the same cascade as startup: the files above and
the \`AVISOSERVER_\` environment of the running process (which cannot change, so in practice the
files). The result goes through stages A and B exactly as at startup, plus the JetStream setting
checks and the ECPDS checker construction; if any fails, nothing changes, the old configuration
keeps serving, \`configuration.reload.failed\` is logged at \`error\` with the line startup would
have printed after \`aviso-server: \`, and the admin request answers \`400 INVALID_CONFIGURATION\`
with that line as \`message\`.

What a valid reload applies, in one step (requests that arrive afterwards see all of it):

- \`notification_schema\` (event types added, removed or changed, their \`auth\` read/write roles
  and plugins, \`storage_policy\`), and \`notification_schema_strict\`. A removed event type answers
  \`UNKNOWN_EVENT_TYPE\` to new requests in strict mode. On JetStream, the streams of new and changed
  schemas are created or reconciled right away, as their first use after startup would.
- \`auth.admin_roles\`.
- The certificate files of \`application.tls\` (and their names): read and checked again at every
  reload, exactly as at startup (a file that cannot be used refuses the reload with startup's
  line); new connections get the new certificate, open ones keep theirs. Turning TLS on or off
  needs a restart.

Open watch and replay streams are not closed and keep the filter they were opened with.

Everything else is read once at startup and changes at the next restart: \`application.*\`
apart from the certificate files (listening address and port, \`cors\`, \`base_url\`, \`additional_origins\`, body and
connection limits, static files, homepage links), \`logging.*\`, \`auth.enabled\`,
\`auth.browser_cookie\`, \`auth.mode\`, \`auth.jwt_secret\`, \`auth.auth_o_tron_url\`,
\`auth.timeout_ms\`, \`ecpds.*\` (a checker is built at the first reload that needs one, and kept),
\`metrics.*\`, \`notification_backend.*\` (kind, NATS URL and every backend setting),
\`watch_endpoint.*\` and \`notification_endpoint.*\`. A reload that changes any of them logs \`configuration.reload.ignored\` (\`warn\`)
with their dotted names, lists them in the admin answer's \`restart_required\`, and applies the rest.

## Several workers

\`application.workers\` above 1 (or \`auto\`: one per CPU the process may use) starts a primary
process and that many workers (D36). Each worker is a complete server on the same
\`host\`:\`port\`, with its own NATS connection and live feeds; the primary serves no request: it
serves the metrics port with every worker's metrics added up ([metrics](metrics.md#several-workers)),
handles the signals and replaces a worker that dies. How to size it:
[deployment](deployment.md#several-worker-processes-applicationworkers).

- It needs \`notification_backend.kind: jetstream\`, where every process sees every notification.
  With \`in_memory\`, whose history lives in one process, a value above 1 (or \`auto\` resolving
  above 1) is a startup error:
  \`application.workers: 2 server processes need notification_backend.kind jetstream: …\`.
- The primary loads and checks the configuration before any worker starts, exactly as a single
  process does (a configuration error is its one line on stderr); the workers serve the
  configuration the primary sends them and read no file themselves.
- \`1\`, the default, is one process serving everything, with no primary.

Reloading: \`SIGHUP\` to the primary (or to a worker), and \`POST /api/v1/admin/reload\` on
whichever worker gets the request, reload every worker. The primary reads the cascade once and
sends the result to every worker; each checks it as above and applies it or refuses. They all
check the same configuration with the same rules, so one refuses only when all do, and the
answer (the admin request's, and \`aviso_config_reloads_total\`, counted once) is a success when
every worker applied it, with \`event_types_*\` as the answering worker saw them and
\`restart_required\` naming what any worker needs a restart for; else the first refusal's \`400\`.
Each worker logs its own \`configuration.reload.*\` lines (the answering worker's carry the request
id); the primary logs \`cluster.reload.applied\`, or \`cluster.reload.refused\` with \`refused_by\`
and \`applied_by\` (a worker that has not answered within 30 s counts as refusing). A worker
started later (a replacement) runs the startup settings with the schemas, strict mode and admin
roles of the last reload every worker applied, so it serves what its siblings serve; one that
started while a reload was being applied applies it as soon as it listens
(\`cluster.reload.caught_up\`). Changing \`application.workers\` itself needs a restart.

The limits of one process apply to each worker: \`application.max_streams\`,
\`application.max_connections\`, \`watch_endpoint.max_total_buffered_bytes\` and the ECPDS
destination cache are per worker, so a server of N workers holds up to N times as many streams,
connections and buffered bytes (D44).

## Minimal configuration

\`\`\`yaml
application:
  host: "127.0.0.1"
  port: 8000
notification_backend:
  kind: in_memory
\`\`\`
`;
