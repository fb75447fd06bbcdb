// An application of the package, type-checked by `make typecheck` with
// tsc --strict: what must compile does, and each @ts-expect-error line is
// a mistake the types must catch (tsc fails if it compiles).
import { Sluice, SluiceError, type PresenceMember, type MessageInfo, type Position, type Presence, type PresencePage, type State, type Value } from "@sluicehq/sluice";
// The bundler recipe of the package README: the module's URL, as
// esbuild's file loader gives it (dist/sluice.wasm.d.ts).
import wasmURL from "@sluicehq/sluice/dist/sluice.wasm";

// Messages typed with interfaces, as applications write them.
interface ChatMessage {
  text: string;
  from: { name: string; avatar?: Uint8Array };
  sentAt: Date; // sent as its ISO string; arrives as a string
  tags: readonly string[];
  edited?: boolean;
  big: bigint;
}

type Reading = { sensor: string; values: number[]; raw: ArrayBuffer | null };

const states: State[] = [];
const client = await Sluice.connect("wss://edge.example.com", {
  appkey: "demo",
  onState: (s) => states.push(s), // registered before connecting: hears "connected"
  onError: (e) => console.warn(e.code, e.message),
});

const message: ChatMessage = {
  text: "hi",
  from: { name: "ana" },
  sentAt: new Date(),
  tags: ["a"],
  big: 2n ** 60n,
};
const at: Position = await client.publish("chat", message);
await client.publish<Reading>("sensors", { sensor: "t1", values: [1, 2.5], raw: null });
await client.write("kv", { count: 1, nested: [{ ok: true }] });
await client.publish("plain", "text");
await client.publish("null", null);
await client.publish("chat", message, { excludeSelf: true });
await client.write("kv", { count: 2 }, {});
console.log(at);

// Received messages are what the application says the channel carries.
interface ChatReceived extends Omit<ChatMessage, "sentAt"> {
  sentAt: string;
}
const sub = client.subscribe<ChatReceived>("chat", { history: { count: 20 } }, (m, info: MessageInfo) => {
  const text: string = m.text;
  const when: Date = new Date(m.sentAt);
  console.log(text, when, info.position, info.endOfBatch);
});
await sub.ready;
client.subscribe("any", (m: Value) => console.log(m)); // Value without a type parameter

const last = await client.read<Reading>("sensors");
if (last.message) {
  const first: number | undefined = last.message.values[0];
  console.log(first, last.position);
}

try {
  await client.publish("chat", message);
} catch (e) {
  if (e instanceof SluiceError) {
    switch (e.code) {
      case "authorization_denied":
      case "invalid_appkey":
      case "network":
      case "disconnected":
        console.warn(e.code, e.reason);
        break;
      case "something_newer": // codes of newer edges are strings too
        break;
    }
  }
}

// Presence: who is in the room.
const room = client.subscribe("chat", { presence: true }, () => {});
room.on("members", (ms: PresenceMember[]) => console.log(ms.map((m) => m.userId)));
room.on("join", (m: PresenceMember) => console.log("joined", m.userId, m.info));
room.on("leave", (m) => console.log("left", m.userId, m.connections));
room.on("count", ({ users, connections }) => console.log(users, "members,", connections, "connections"));
const here: Presence = room.presence();
console.log(here.users, here.connections, here.members.length);
const page: PresencePage = await client.presence("chat", { limit: 50 });
if (page.next !== null) await client.presence("chat", { after: page.next });
// @ts-expect-error presence events carry members, not messages
room.on("join", (m: MessageInfo) => console.log(m.position));

// Mistakes the types catch.
// @ts-expect-error a function is not a message
await client.publish("chat", () => 1);
// @ts-expect-error nor is an object with a function member
await client.publish("chat", { text: "hi", reply: () => 1 });
// @ts-expect-error a symbol is not a message
await client.publish("chat", { s: Symbol("x") });
// @ts-expect-error undefined alone is not a message
await client.publish("chat", undefined);
// @ts-expect-error excludeSelf is a boolean
await client.publish("chat", message, { excludeSelf: "yes" });
// @ts-expect-error the handler's message is ChatReceived, which has no .body
client.subscribe<ChatReceived>("chat", (m) => console.log(m.body));
// @ts-expect-error read's message may be null
console.log((await client.read<Reading>("sensors")).message.values);

await client.close();

// Where sluice.wasm is, and a WebSocket class for a runtime without one
// (Node.js 20: the ws package's, say).
const url: string = wasmURL;
await Sluice.load({ wasmURL: url, WebSocket });
const other = await Sluice.connect("wss://edge.example.com", { appkey: "demo", wasmURL, WebSocket });
await other.close();
// @ts-expect-error WebSocket is a class, not an instance
await Sluice.load({ WebSocket: new WebSocket("wss://edge.example.com") });

// Positions kept across page loads.
const resumed = await Sluice.connect("wss://edge.example.com", { appkey: "demo", resume: "session", resumeKey: "app", shared: true });
await resumed.close();
// @ts-expect-error resume is "session" or "local"
await Sluice.connect("wss://edge.example.com", { appkey: "demo", resume: true });
