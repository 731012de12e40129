// The API's own description: GET /openapi.json (the OpenAPI 3.1 document, generated from this router on
// first request and kept while the router does not change) and GET /docs, an API reference page that
// Swagger UI renders from it in the browser. Swagger UI's files are served from node_modules
// (swagger-ui-dist), so the page works with no network; the page's own start-up script is a file too,
// so the Content-Security-Policy allows scripts from this origin only. All of these are public
// (route-scopes.ts): they describe the API and hold no data.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Router } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { openApiDocument } from '../openapi/openapi-document.js';
import { describeRoute } from '../openapi/route-docs.js';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * Swagger UI renders with inline style attributes and data: images, so styles allow 'unsafe-inline';
 * scripts come from this origin only, and the page may fetch only from it.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

/** The files of the page, by the path they are served at: where each comes from and its type. */
const ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  '/docs/swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  '/docs/swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
};
const START_PATH = '/docs/start.js';

// The empty icon keeps the browser from asking for /favicon.ico, which is not a public route.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Folio API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="${START_PATH}"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to a public validator for a badge.
const START_SCRIPT = `window.addEventListener('load', function () {
  window.reference = SwaggerUIBundle({
    url: '${OPENAPI_PATH}',
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    displayOperationId: false,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

export function docsRoutes(router: Router, version: string): void {
  let cached: { routes: number; text: string } | undefined;
  const documentText = (): string => {
    if (cached?.routes !== router.stack.length) {
      cached = { routes: router.stack.length, text: JSON.stringify(openApiDocument(router, { version })) };
    }
    return cached.text;
  };
  const assetDir = swaggerUiDirectory();
  const assetText = new Map<string, Buffer>();

  describeRoute(router, `GET ${OPENAPI_PATH}`, {
    tag: 'System', summary: 'This document (OpenAPI 3.1)',
    answers: [{ status: 200, description: 'The OpenAPI document', schema: z.object({ openapi: z.string() }).loose() }],
  });
  router.get(OPENAPI_PATH, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = documentText();
  });

  describeRoute(router, `GET ${DOCS_PATH}`, {
    tag: 'System', summary: 'The API reference page, rendered from /openapi.json',
    answers: [{ status: 200, description: 'An HTML page', schema: z.string(), contentType: 'text/html' }],
  });
  router.get(DOCS_PATH, (ctx) => {
    page(ctx, 'text/html; charset=utf-8', PAGE);
  });

  describeRoute(router, `GET ${START_PATH}`, {
    tag: 'System', summary: "The reference page's start-up script",
    answers: [{ status: 200, description: 'JavaScript', schema: z.string(), contentType: 'text/javascript' }],
  });
  router.get(START_PATH, (ctx) => {
    page(ctx, 'text/javascript; charset=utf-8', START_SCRIPT);
  });

  for (const [assetPath, asset] of Object.entries(ASSETS)) {
    describeRoute(router, `GET ${assetPath}`, {
      tag: 'System', summary: `Swagger UI's ${asset.file}, served from node_modules`,
      answers: [{ status: 200, description: asset.file, schema: z.string(), contentType: asset.type.split(';')[0] }],
    });
    router.get(assetPath, (ctx) => {
      let bytes = assetText.get(assetPath);
      if (!bytes) {
        bytes = fs.readFileSync(path.join(assetDir, asset.file));
        assetText.set(assetPath, bytes);
      }
      page(ctx, asset.type, bytes);
      // The files change only with the package: a browser may keep them a day.
      ctx.set('Cache-Control', 'public, max-age=86400');
    });
  }
}

function page(ctx: Koa.Context, type: string, body: string | Buffer): void {
  ctx.type = type;
  ctx.set('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = body;
}

/** Where swagger-ui-dist is installed (it has no exports map, so its package.json resolves). */
function swaggerUiDirectory(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}
