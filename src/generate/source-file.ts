/** A generated source file: the text prettier would format, and the same file already formatted. */
export interface SourceFile {
  /**
   * The file as written before formatting: what prettier formats when print() cannot lay it out, and what
   * the tests compare print() with (prettier's formatting of it).
   */
  source(): string;
  /**
   * The file formatted exactly as prettier (printWidth 100, trailing commas) formats source(). Throws
   * Unsupported (print/doc.ts) for text whose layout it does not know exactly (wide characters).
   */
  print(): string;
}
