// Source text with a line index: turns offsets into 1-based lines and columns.
import { LineCounter } from "yaml";
import type { SourcePosition, SourceRange } from "./diagnostics.js";

export class SourceText {
  readonly file: string;
  readonly text: string;
  readonly lines: LineCounter;

  /** Pass the LineCounter the YAML parser filled, or none to index the text here. */
  constructor(file: string, text: string, lines?: LineCounter) {
    this.file = file;
    this.text = text;
    if (lines !== undefined) {
      this.lines = lines;
    } else {
      this.lines = new LineCounter();
      this.lines.addNewLine(0);
      for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 10) this.lines.addNewLine(i + 1);
    }
  }

  position(offset: number): SourcePosition {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    const { line, col } = this.lines.linePos(clamped);
    return { offset: clamped, line, column: col };
  }

  range(start: number, end: number): SourceRange {
    return { start: this.position(start), end: this.position(Math.max(start, end)) };
  }

  /** The text of one line (1-based), without its line break. */
  lineText(line: number): string {
    const start = this.lines.lineStarts[line - 1];
    if (start === undefined) return "";
    const next = this.lines.lineStarts[line];
    const end = next === undefined ? this.text.length : next - 1;
    return this.text.slice(start, end).replace(/\r$/, "");
  }
}
