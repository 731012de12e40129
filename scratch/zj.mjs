import { z } from 'zod';
import { transactionShape, refundSchema } from '/work/wt-openapi/dist/http/transaction-schemas.js';
import { createBalanceSchema } from '/work/wt-openapi/dist/http/ledger-schemas.js';
import { pageQuerySchema } from '/work/wt-openapi/dist/http/common-schemas.js';
import { createApiKeySchema } from '/work/wt-openapi/dist/http/access-schemas.js';
for (const s of [transactionShape, refundSchema, createBalanceSchema, pageQuerySchema, createApiKeySchema]) {
  try { console.log(JSON.stringify(z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }))); } catch (e) { console.log('ERR', e.message); }
}
