/** Reading a secret from the terminal without echo (or one line from a pipe). */

/** Lines of a piped (non-terminal) input, read once per stream. */
const pipedLines = new WeakMap<NodeJS.ReadableStream, string[]>();

async function lines(input: NodeJS.ReadableStream): Promise<string[]> {
  let cached = pipedLines.get(input);
  if (!cached) {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(Buffer.from(chunk as Buffer));
    cached = Buffer.concat(chunks).toString('utf8').split(/\r?\n/);
    pipedLines.set(input, cached);
  }
  return cached;
}

/** Ask `question` on stderr and read an answer that is not echoed. */
export async function promptHidden(question: string, input: NodeJS.ReadStream = process.stdin, write: (text: string) => void = (t) => process.stderr.write(t)): Promise<string> {
  const output = { write };
  output.write(question);
  if (!input.isTTY) {
    const line = (await lines(input)).shift() ?? '';
    output.write('\n');
    return line.trim();
  }
  return new Promise((resolve, reject) => {
    let answer = '';
    input.setRawMode(true);
    input.resume();
    input.setEncoding('utf8');
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      output.write('\n');
      if (error) reject(error);
      else resolve(answer.trim());
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new Error('interrupted'));
        if (ch === '\u007f' || ch === '\b') answer = answer.slice(0, -1);
        else answer += ch;
      }
    };
    input.on('data', onData);
  });
}

/** Read all of standard input (for `-` arguments). */
export async function readStdin(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  return (await lines(input)).splice(0).join('\n');
}
