// Where the headless browser for page tests is and how it is started: Debian's chromium (installed by
// .ci/run when missing), or FOLIO_CHROMIUM, driven by playwright-core.

export const CHROMIUM = process.env.FOLIO_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
