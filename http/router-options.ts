// How Folio's routers match a request's path, shared by the core (http/app.ts), the control plane
// (cloud/cloud-app.ts) and the proxy's list of the core routes it forwards (cloud/proxy-routes.ts), so
// that a path means one thing to all three. Case-sensitive: @koa/router matches `/ADMIN/cutover/fence`
// to `/admin/cutover/fence` by default, while every check made on the path itself (the proxy's, the
// fence guard's, the public routes') compares it as written; one of them then guards a route the
// router does not think it names. A trailing slash stays optional (Blnk's clients send both forms).

export const ROUTER_OPTIONS = { sensitive: true, strict: false } as const;
