// Highlights of a search hit, as Typesense writes them: which of the searched fields hold the query's
// words, and a snippet of each with the words marked. Two forms, as Typesense sends both by default:
//   highlights  (its first form) [{field, matched_tokens, snippet, value?}] for top-level fields
//   highlight   (its second form) {field: {matched_tokens, snippet, value?}}, metadata keys nested
//               under meta_data ({meta_data: {key: {...}}}), which the first form leaves out
// Words are matched as the full-text index matches them (index-schema.ts: unicode61, `_` and `-` inside
// words, case and diacritics folded), the last word also as the start of a token when prefixes are on.
// An id field searched by query_by is matched whole (or by its start), as the search compared it.
//
// A snippet is the whole value when it has at most `snippet_threshold` tokens, else the first matched
// token with `affix_tokens` tokens on each side; `value` (the whole value, marked) only for the fields
// the request names in highlight_full_fields. Pure: the same hit and request give the same highlights.
// The work is bounded per answer (HIGHLIGHT_CHARACTERS_MAX): text past the budget is not highlighted.

/** How a searched field is matched: words in text, words in metadata values, or an id compared whole. */
export type HighlightKind = 'text' | 'meta' | 'value';

export interface HighlightField {
  name: string;
  kind: HighlightKind;
}

/** What to highlight, as the query side resolved it from q, query_by, prefix and highlight_fields. */
export interface HighlightSpec {
  words: string[];
  /** The last word also matches the start of a token. */
  prefix: boolean;
  fields: HighlightField[];
  /** Fields whose whole value is also given, marked (highlight_full_fields). */
  full_fields: string[];
}

/** How the marks look and how long snippets are (Typesense's names and defaults). */
export interface HighlightOptions {
  start_tag: string;
  end_tag: string;
  affix_tokens: number;
  snippet_threshold: number;
  /** Whether the first form (`highlights`) is given. */
  first_form: boolean;
}

export const DEFAULT_HIGHLIGHT_OPTIONS: HighlightOptions = {
  start_tag: '<mark>', end_tag: '</mark>', affix_tokens: 4, snippet_threshold: 30, first_form: true,
};

/** Characters of searched text examined per answer; past it, hits carry no further highlights. */
export const HIGHLIGHT_CHARACTERS_MAX = 2_000_000;

export interface FieldHighlight {
  matched_tokens: string[];
  snippet: string;
  value?: string;
}

export interface HitHighlights {
  highlights?: Array<{ field: string } & FieldHighlight>;
  highlight: Record<string, unknown>;
}

/** A run of characters the full-text tokenizer keeps as one token (letters, digits, private use, `_`, `-`). */
const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}_-]+/gu;

/** A token as the index holds it: lower case, diacritics removed. */
export function foldToken(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

interface Token {
  text: string;
  start: number;
  end: number;
}

function tokensOf(text: string): Token[] {
  return [...text.matchAll(TOKEN)].map((match) => ({ text: match[0], start: match.index, end: match.index + match[0].length }));
}

/** Highlights hits one after another within one answer's budget. */
export class Highlighter {
  private budget = HIGHLIGHT_CHARACTERS_MAX;
  /** Folded word tokens; the last one may match as a prefix. */
  private readonly wordTokens: string[];

  constructor(private readonly spec: HighlightSpec, private readonly options: HighlightOptions) {
    this.wordTokens = spec.words.flatMap((word) => tokensOf(word).map((token) => foldToken(token.text)));
  }

  /** The highlights of one record (its fields by name, as the record holds them). */
  highlight(record: Readonly<Record<string, unknown>>): HitHighlights {
    const answer: HitHighlights = { highlight: {} };
    if (this.options.first_form) answer.highlights = [];
    if (this.spec.words.length === 0) return answer;
    for (const field of this.spec.fields) {
      const full = this.spec.full_fields.includes(field.name);
      if (field.kind === 'meta') {
        const nested = this.metaHighlight(record[field.name], full);
        if (nested !== undefined) answer.highlight[field.name] = nested;
        continue;
      }
      const value = record[field.name];
      if (typeof value !== 'string' || value === '') continue;
      const found = field.kind === 'value' ? this.valueHighlight(value, full) : this.textHighlight(value, full);
      if (found === undefined) continue;
      answer.highlight[field.name] = found;
      answer.highlights?.push({ field: field.name, ...found });
    }
    return answer;
  }

  /** An id matched whole, or by its start for the last word with prefixes on. */
  private valueHighlight(value: string, full: boolean): FieldHighlight | undefined {
    const last = this.spec.words.length - 1;
    const matched = this.spec.words.some((word, index) => word === value || (this.spec.prefix && index === last && value.startsWith(word)));
    if (!matched) return undefined;
    const marked = this.options.start_tag + value + this.options.end_tag;
    return full ? { matched_tokens: [value], snippet: marked, value: marked } : { matched_tokens: [value], snippet: marked };
  }

  private textHighlight(value: string, full: boolean): FieldHighlight | undefined {
    if (this.budget <= 0) return undefined;
    this.budget -= value.length;
    const tokens = tokensOf(value);
    const matched = tokens.map((token) => this.matches(foldToken(token.text)));
    const first = matched.indexOf(true);
    if (first === -1) return undefined;
    const whole = tokens.length <= this.options.snippet_threshold;
    const from = whole ? 0 : Math.max(0, first - this.options.affix_tokens);
    const to = whole ? tokens.length - 1 : Math.min(tokens.length - 1, first + this.options.affix_tokens);
    const snippet = this.marked(value, tokens, matched, from, to, whole);
    const matchedTokens = tokens.slice(from, to + 1).filter((_, index) => matched[from + index]).map((token) => token.text);
    const highlight: FieldHighlight = { matched_tokens: matchedTokens, snippet };
    if (full) highlight.value = this.marked(value, tokens, matched, 0, tokens.length - 1, true);
    return highlight;
  }

  /** Metadata values that hold a word, nested as the metadata is (strings only, as Typesense indexes them). */
  private metaHighlight(value: unknown, full: boolean, depth = 0): Record<string, unknown> | undefined {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || depth > 8) return undefined;
    const nested: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      const found = typeof inner === 'string' ? this.textHighlight(inner, full) : this.metaHighlight(inner, full, depth + 1);
      if (found !== undefined) nested[key] = found;
    }
    return Object.keys(nested).length > 0 ? nested : undefined;
  }

  private matches(folded: string): boolean {
    const last = this.wordTokens.length - 1;
    return this.wordTokens.some((word, index) => folded === word || (this.spec.prefix && index === last && folded.startsWith(word)));
  }

  /** The text from token `from` to token `to` (or all of it), each matched token between the tags. */
  private marked(value: string, tokens: Token[], matched: boolean[], from: number, to: number, whole: boolean): string {
    const start = whole ? 0 : (tokens[from] as Token).start;
    const end = whole ? value.length : (tokens[to] as Token).end;
    let text = '';
    let at = start;
    for (let index = from; index <= to; index += 1) {
      const token = tokens[index] as Token;
      if (!matched[index]) continue;
      text += value.slice(at, token.start) + this.options.start_tag + token.text + this.options.end_tag;
      at = token.end;
    }
    return text + value.slice(at, end);
  }
}
