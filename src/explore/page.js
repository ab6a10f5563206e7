// What passlab's two pages share (the pipeline explorer, explorer.js, and
// the annotated source, source.js), put before either in its script.

// Text from base64 of gzip'd bytes, as the pages embed their data.
async function plabGunzip(b64) {
  const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

// An element with a class and a text.
function plabEl(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
