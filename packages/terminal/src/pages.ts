/**
 * The pages the OAuth callback ends on when the sign-in cannot complete: a plain page that says
 * what happened and what to do, with a link back to the front end. Everything shown is escaped.
 */

function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function resultPage(options: {
  readonly title: string;
  readonly message: string;
  readonly reason: string;
  readonly backUrl: string;
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="dark light">
<title>${escapeHtml(options.title)} — tensormine terminal</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>
  :root { --bg: #0f1218; --fg: #e8ebf1; --card: #181d27; --line: #273041; --text: #c9cfdb; --muted: #9aa3b2; }
  @media (prefers-color-scheme: light) { :root { --bg: #f5f7fb; --fg: #141821; --card: #fff; --line: #d5dbe6; --text: #3b4252; --muted: #586173; } }
  body { font-family: system-ui, sans-serif; background: var(--bg); color: var(--fg); display: grid; place-items: center; min-height: 100vh; margin: 0; padding: 1rem; box-sizing: border-box; }
  main { max-width: 520px; background: var(--card); border: 1px solid var(--line); border-radius: 14px; padding: 2rem; overflow-wrap: anywhere; }
  h1 { margin-top: 0; font-size: 1.4rem; }
  p { line-height: 1.5; color: var(--text); }
  code { color: var(--muted); }
  a { display: inline-block; margin-top: 1rem; color: #fff; background: #2b5cab; padding: .55rem 1rem; border-radius: 8px; text-decoration: none; }
</style>
</head>
<body>
<main data-reason="${escapeHtml(options.reason)}">
  <h1>${escapeHtml(options.title)}</h1>
  <p>${escapeHtml(options.message)}</p>
  <p><code>${escapeHtml(options.reason)}</code></p>
  <a href="${escapeHtml(options.backUrl)}">Back to the terminal</a>
</main>
</body>
</html>
`;
}

export const FLOW_ERROR_TITLES: Record<string, string> = {
  denied: 'Sign-in cancelled',
  no_flow: 'No sign-in in progress',
  bad_state: 'Sign-in refused',
  expired: 'Sign-in expired',
  replayed: 'Sign-in link already used',
  code_refused: 'Sign-in refused by the provider',
  provider_error: 'The provider did not answer',
  wallet_required: 'Prove your wallet first',
  not_configured: 'Sign-in is not available',
};
