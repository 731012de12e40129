// A search the index could run but refuses to for what it would cost (facets or groups over more records
// than their bound): answered as 400 SRCH_QUERY_INVALID with the message, naming the parameter.

export class SearchRefusal extends Error {
  override readonly name = 'SearchRefusal';
}
