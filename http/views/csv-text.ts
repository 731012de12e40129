// CSV text to rows (RFC 4180): fields separated by commas, a field in double quotes may hold commas,
// line breaks and doubled quotes, lines end in LF or CRLF, a UTF-8 byte order mark is ignored. Each row
// keeps the line it starts on, so a bad row can be named. Blank lines are skipped. Malformed quoting is
// an error naming its line, never a guess.

export interface CsvRow {
  /** 1-based line the row starts on. */
  line: number;
  fields: string[];
}

export class CsvSyntaxError extends Error {
  override readonly name = 'CsvSyntaxError';
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

export function parseCsv(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let position = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (position < text.length) {
    const start = line;
    const fields: string[] = [];
    let endOfRow = false;
    while (!endOfRow) {
      let field = '';
      if (text[position] === '"') {
        position += 1;
        for (;;) {
          if (position >= text.length) throw new CsvSyntaxError(start, 'a quoted field is not closed');
          const char = text[position] as string;
          if (char === '"') {
            if (text[position + 1] === '"') {
              field += '"';
              position += 2;
              continue;
            }
            position += 1;
            break;
          }
          if (char === '\n') line += 1;
          field += char;
          position += 1;
        }
        const next = text[position];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new CsvSyntaxError(line, 'text after the closing quote of a field');
        }
      } else {
        const end = nextDelimiter(text, position);
        field = text.slice(position, end);
        if (field.includes('"')) throw new CsvSyntaxError(line, 'a quote inside an unquoted field (quote the whole field and double the quote)');
        position = end;
      }
      fields.push(field);
      const delimiter = text[position];
      if (delimiter === ',') position += 1;
      else {
        if (delimiter === '\r') position += 1;
        if (text[position] === '\n') position += 1;
        line += 1;
        endOfRow = true;
      }
    }
    if (fields.length === 1 && fields[0] === '') continue;
    rows.push({ line: start, fields });
  }
  return rows;
}

function nextDelimiter(text: string, from: number): number {
  for (let index = from; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 44 || code === 10 || code === 13) return index;
  }
  return text.length;
}
