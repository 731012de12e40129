// The HTML of the authorization pages: the sign-in and consent form, and the error page shown when a
// request cannot be trusted enough to redirect anywhere (unknown client, unregistered redirect_uri).
// Every value is HTML-escaped; the only style is in one element allowed by a per-response nonce. The
// headers forbid framing (clickjacking), referrers (codes in URLs), caching, and any script.

import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { PendingSignIn } from './pending-sign-ins.js';

const SCOPE_WORDING: Record<string, string> = {
  '*': 'full access to your deployments',
  'proxy:read': 'read data of your ledgers',
  'proxy:write': 'read and change data of your ledgers',
  'deployments:read': 'see your deployments',
  'deployments:write': 'upgrade your deployments',
  'mcp:read': 'read through MCP',
  'data:read': 'read your data',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function setPageHeaders(ctx: Koa.Context, nonce: string, formTargets: string): void {
  ctx.set('Content-Security-Policy', `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formTargets}; frame-ancestors 'none'; base-uri 'none'`);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.type = 'text/html; charset=utf-8';
}

function layout(nonce: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">
body { font-family: system-ui, sans-serif; max-width: 26rem; margin: 3rem auto; padding: 0 1rem; color: #1d2330; }
label { display: block; margin-top: 0.8rem; }
input[type=email], input[type=password] { width: 100%; padding: 0.4rem; box-sizing: border-box; }
.actions { margin-top: 1.2rem; display: flex; gap: 0.6rem; }
.error { color: #a11; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** The sign-in and consent form for a pending request; `problem` is shown above it after a failed try. */
export function renderSignInPage(ctx: Koa.Context, entry: PendingSignIn, problem?: string): void {
  const nonce = randomBytes(16).toString('base64');
  // The form posts here, and its answer redirects to the client: CSP's form-action covers both.
  setPageHeaders(ctx, nonce, `'self' ${new URL(entry.redirectUri).origin}`);
  const scopes = entry.scopes.map((scope) => `<li>${escapeHtml(SCOPE_WORDING[scope] ?? scope)} <code>${escapeHtml(scope)}</code></li>`).join('');
  ctx.body = layout(nonce, 'Sign in to Folio Cloud', `<h1>Sign in to Folio Cloud</h1>
<p><strong id="client-name">${escapeHtml(entry.client.name)}</strong> asks for access to:</p>
<ul id="scopes">${scopes}</ul>
${problem ? `<p class="error" id="problem">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="request" value="${escapeHtml(entry.sealed)}">
<label>E-mail <input type="email" name="email" autocomplete="username" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<div class="actions">
<button type="submit" name="decision" value="approve" id="approve">Sign in and allow</button>
<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>
</div>
</form>`);
}

/** A page saying why the request stops here; nothing is redirected. */
export function renderErrorPage(ctx: Koa.Context, status: number, message: string): void {
  const nonce = randomBytes(16).toString('base64');
  setPageHeaders(ctx, nonce, "'none'");
  ctx.status = status;
  ctx.body = layout(nonce, 'Authorization failed', `<h1>Authorization failed</h1>
<p class="error" id="problem">${escapeHtml(message)}</p>
<p>Go back to the application and start again.</p>`);
}
