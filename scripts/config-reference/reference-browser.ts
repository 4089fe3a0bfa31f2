/**
 * The prose of docs/configuration.md about browser access (docs/design/rules/browser.md §2, §3, D46): the server's
 * own origins, CORS and TLS with HTTP/2, rendered after the startup rules and before the field reference.
 */
export const BROWSER_ACCESS_REFERENCE = `
## The server's own origins

A browser request that would change state (a notify, an admin request) is served only from a
page on one of the server's own origins or on an origin CORS allows; anything else gets
\`403 CROSS_ORIGIN_REQUEST_REFUSED\` ([security](security.md#cross-site-writes)). Requests without
\`Origin\` (curl, the aviso client, providers) are not affected. The own origins come from the
configuration, never from the request's \`Host\` header ([DNS rebinding](security.md#dns-rebinding), D46):

- the origin of \`application.base_url\` (\`https://aviso.example.org/aviso\` → \`https://aviso.example.org\`):
  set it to the address browsers open the console at, behind a proxy the proxy's public one;
- every entry of \`application.additional_origins\`, for the further names browsers use;
- when \`base_url\` names \`localhost\`, \`127.0.0.1\` or \`[::1]\`: each of the three at \`base_url\`'s
  port and at the port the server listens on (\`https\` with \`application.tls\`). With the
  defaults (\`base_url: http://localhost\`) and \`port: 8000\`, the console works at
  \`http://localhost:8000\` and \`http://127.0.0.1:8000\` with nothing listed.

\`\`\`yaml
application:
  base_url: https://aviso.example.org        # the public origin, also the CloudEvent source prefix
  additional_origins:
    - https://aviso.example.int              # an internal name of the same server
    - http://localhost:8080                  # a port forwarded to this server
\`\`\`

An entry is an origin as the browser sends it in \`Origin\` (\`scheme://host[:port]\`, lower case, no
path, no trailing slash, no default port; no \`"*"\`); anything else fails startup with the form to
write (\`application.additional_origins[0]: "https://aviso.example.int/" is not an origin as
browsers send it: write "https://aviso.example.int"\`). From the environment, give the list as
JSON: \`AVISOSERVER_APPLICATION__ADDITIONAL_ORIGINS='["https://aviso.example.int"]'\`. Both
settings are read at startup: a reload that changes them lists them in \`restart_required\`.

## CORS

\`application.cors.allowed_origins\` lets web pages on other origins call \`/api/v1/*\`
(docs/design/rules/browser.md §2). It is empty by default, and then the server sends no CORS header at all, except
the \`Access-Control-Allow-Origin: *\` every watch/replay stream has always carried (
docs/design/rules/streaming.md §3.1, unchanged for reference clients).

\`\`\`yaml
application:
  cors:
    allowed_origins:
      - https://console.example.org    # may send credentials (cookies, Authorization)
      - http://localhost:5173          # a developer's page
      # - "*"                          # any other origin, without credentials
\`\`\`

- An entry is an origin as the browser sends it in \`Origin\`: \`scheme://host[:port]\`, lower case,
  no path, no trailing slash, no default port. Anything else fails startup with the form to write.
- A **listed origin** gets \`Access-Control-Allow-Origin: <origin>\`,
  \`Access-Control-Allow-Credentials: true\` and \`Access-Control-Expose-Headers: X-Request-ID, Idempotent-Replayed, Retry-After\` on
  every \`/api/v1/*\` answer, streams and errors included.
- **\`"*"\`** in the list lets every other origin read, with \`Access-Control-Allow-Origin: *\` and
  never \`Access-Control-Allow-Credentials\` (the CORS protocol forbids the two together). A
  credentialed request (\`credentials: 'include'\`) from such an origin is blocked by the browser;
  list the origin by name to allow it.
- **Preflights** (\`OPTIONS\` with \`Access-Control-Request-Method\`) from an allowed origin are
  answered \`204\` with \`Access-Control-Allow-Methods: GET, HEAD, POST, DELETE\`,
  \`Access-Control-Allow-Headers: Authorization, Content-Type, Last-Event-ID, Idempotency-Key\` and
  \`Access-Control-Max-Age: 600\`. They are answered before authentication (a browser sends no
  credentials with them), counted in \`aviso_http_requests_total\` and logged
  (\`http.request.completed\`) under the route they ask about with method \`OPTIONS\`.
- **Any other origin**, any path outside \`/api/v1/\`, and an \`OPTIONS\` that is no preflight get
  no CORS header and the answer they would get without CORS (\`405\` for \`OPTIONS\`): the browser
  blocks the page, the server never fails. A refused origin's stream carries no
  \`Access-Control-Allow-Origin\` either. Requests without \`Origin\` (curl, the aviso client) are
  answered exactly as without CORS.
- With CORS configured, every answer carries \`Vary: Origin\`, so caches keep answers to different
  origins apart.

## TLS and HTTP/2

\`application.tls\` makes the public port speak HTTPS, with HTTP/2 when the client offers it by
ALPN (\`h2\`: browsers, curl, Node's \`http2\`) and HTTP/1.1 otherwise, on the same port
(docs/design/rules/browser.md §3). Without it the port serves plain HTTP/1.1 as before.

\`\`\`yaml
application:
  port: 8443
  tls:
    cert_file: /etc/aviso/tls/server.pem   # certificate, followed by its intermediates
    key_file: /etc/aviso/tls/server.key
    # ca_file: /etc/aviso/tls/chain.pem    # intermediates, when cert_file holds only the leaf
\`\`\`

The files are read at startup (a missing or unreadable file, or a key that does not belong to
the certificate, stops the process with one line naming the field and the file) and again at
every [reload](#reloading-without-a-restart): to rotate a certificate, replace the files and send
\`SIGHUP\` (or \`POST /api/v1/admin/reload\`); new connections get the new certificate, open ones and
their streams go on with the old one, and files that cannot be used refuse the reload with the
same line, leaving the old certificate in service. HTTP/2 allows 256
concurrent streams per connection, so one page or one aviso client can keep many watches open on
one connection (a browser on HTTP/1.1 stops at six connections per origin); a client that opens a
257th at once loses the whole connection (Node's rule). Every route and
stream behaves the same on both protocols; HTTP/2 answers carry no \`Connection\` header, which
HTTP/2 forbids. Plain HTTP on the TLS port is refused. How the connection limits apply on the
TLS port is in [security](security.md#tls-and-http2); deployment choices (behind a proxy or
direct) in [deployment](deployment.md#tls-http2-and-cors).
`;
