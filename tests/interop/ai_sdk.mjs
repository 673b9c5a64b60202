// The AI SDK's own reader and validator over agentmsg's UIMessages and UI message stream chunks.
// Input (a JSON file named by argv[2]): {messages: UIMessage[], streams: UIMessageChunk[][]}.
// Output: {validated, folded, modelMessages}: what validateUIMessages returned, what readUIMessageStream
// folded each stream to (its last message), and the roles convertToModelMessages gave for the messages.
import { readFileSync } from "node:fs";
import { convertToModelMessages, readUIMessageStream, validateUIMessages } from "ai";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const validated = await validateUIMessages({ messages: input.messages });

const folded = [];
for (const chunks of input.streams) {
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last = null;
  for await (const message of readUIMessageStream({
    stream,
    terminateOnError: true,
    onError: (error) => {
      throw error;
    },
  })) {
    last = message;
  }
  folded.push(last);
}
const modelMessages = await convertToModelMessages(validated);
process.stdout.write(JSON.stringify({ validated, folded, modelMessages }));
