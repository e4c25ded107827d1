// Fails early, with a clear message, on a Node version outside `engines`.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19) || major >= 25) {
  console.error(`orrery: Node ${process.versions.node} is not supported; use Node 20.19+, 22 or 24 (see "engines" in package.json).`);
  process.exit(1);
}
