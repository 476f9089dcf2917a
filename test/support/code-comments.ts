// The comments of a TypeScript or JavaScript source, line by line: `//` comments (whole-line or
// after code) and the lines of `/* */` blocks. String and template literals on a line are skipped,
// so a URL in a string is not a comment. Good enough for prose checks; not a parser.
export interface CommentLine {
  /** 1-based line number. */
  line: number;
  text: string;
}

export function commentsOf(source: string): CommentLine[] {
  const out: CommentLine[] = [];
  let inBlock = false;
  source.split('\n').forEach((raw, i) => {
    let rest = raw;
    while (rest.length > 0) {
      if (inBlock) {
        const end = rest.indexOf('*/');
        out.push({ line: i + 1, text: (end === -1 ? rest : rest.slice(0, end)).trim() });
        if (end === -1) return;
        inBlock = false;
        rest = rest.slice(end + 2);
        continue;
      }
      const code = rest.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`|\/(?![/*])(?:[^/\\\n]|\\.)+\/[dgimsuyv]*(?=[\s,;)\].]|$)/g, (m) =>
        ' '.repeat(m.length),
      );
      const line = code.indexOf('//');
      const block = code.indexOf('/*');
      if (line !== -1 && (block === -1 || line < block)) {
        out.push({ line: i + 1, text: rest.slice(line + 2).trim() });
        return;
      }
      if (block === -1) return;
      inBlock = true;
      rest = rest.slice(block + 2);
    }
  });
  return out;
}
