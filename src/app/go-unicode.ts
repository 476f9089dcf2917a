// Where Go 1.26's unicode.IsPrint (Unicode 15.0) differs from what a JavaScript runtime's Unicode
// tables say about letters, marks, numbers, punctuation and symbols.
export function goPrintOverride(_cp: number): boolean | undefined {
  return undefined;
}
