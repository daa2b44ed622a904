// node-zookeeper-client ships no types; zookeeper-client.ts types the parts it uses
// structurally. These declarations only let it import the CommonJS modules.
declare module 'node-zookeeper-client' {
  const library: unknown;
  export default library;
}
declare module 'node-zookeeper-client/lib/Exception.js' {
  const exceptions: unknown;
  export default exceptions;
}
declare module 'node-zookeeper-client/lib/jute/index.js' {
  const jute: unknown;
  export default jute;
}
