// Media helpers, the same rules as the Python library's (src/agentmsg/_media.py): MIME types sniffed from magic
// bytes, strict base64, data URLs, a media type guessed from a URL's path. Browser-safe: Uint8Array, TextDecoder and
// regular expressions only, no Node built-ins.

import { MediaError } from "./errors.js";

function startsWith(data: Uint8Array, ...bytes: number[]): boolean {
  return data.length >= bytes.length && bytes.every((b, i) => data[i] === b);
}

function ascii(data: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...data.subarray(from, to));
}

/** The image MIME type the magic bytes announce (JPEG, PNG, GIF, WEBP), or undefined. */
export function sniffImage(data: Uint8Array): string | undefined {
  if (startsWith(data, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (startsWith(data, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (ascii(data, 0, 6) === "GIF87a" || ascii(data, 0, 6) === "GIF89a") return "image/gif";
  if (data.length >= 12 && ascii(data, 0, 4) === "RIFF" && ascii(data, 8, 12) === "WEBP") return "image/webp";
  return undefined;
}

/** The audio MIME type the magic bytes announce (MP3, Ogg, FLAC, WAV); `audio/mpeg` when unknown, as the seed. */
export function sniffAudio(data: Uint8Array): string {
  if (ascii(data, 0, 3) === "ID3" || (data[0] === 0xff && [0xfb, 0xf3, 0xf2].includes(data[1] ?? 0))) {
    return "audio/mpeg";
  }
  if (ascii(data, 0, 4) === "OggS") return "audio/ogg";
  if (ascii(data, 0, 4) === "fLaC") return "audio/flac";
  if (data.length >= 12 && ascii(data, 0, 4) === "RIFF" && ascii(data, 8, 12) === "WAVE") return "audio/wav";
  return "audio/mpeg";
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** `application/pdf` for PDF magic, `text/plain` for UTF-8 text, else undefined. */
export function sniffDocument(data: Uint8Array): string | undefined {
  if (ascii(data, 0, 5) === "%PDF-") return "application/pdf";
  try {
    UTF8.decode(data);
  } catch {
    return undefined;
  }
  return "text/plain";
}

const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_VALUE = new Uint8Array(128);
for (let i = 0; i < BASE64_ALPHABET.length; i++) BASE64_VALUE[BASE64_ALPHABET.charCodeAt(i)] = i;
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Strict base64 (standard alphabet, padding required, line breaks and spaces allowed); throws {@link MediaError}
 * `invalid base64 for <what>: ...` as the Python library does.
 */
export function decodeBase64(text: string, what: string): Uint8Array {
  // The whitespace Python's \s matches in bytes: a non-ASCII space is not one, as there.
  const compact = text.replace(/[ \t\n\r\f\v]+/g, "");
  if (compact === "") throw new MediaError(`invalid base64 for ${what}: the text is empty`);
  if (!BASE64_TEXT.test(compact)) throw new MediaError(`invalid base64 for ${what}: only base64 data is allowed`);
  if (compact.length % 4 !== 0) throw new MediaError(`invalid base64 for ${what}: incorrect padding`);
  const body = compact.replace(/=+$/, "");
  const out = new Uint8Array(Math.floor((body.length * 6) / 8));
  let bits = 0;
  let value = 0;
  let at = 0;
  for (let i = 0; i < body.length; i++) {
    // Only the alphabet is left (checked above); `value` keeps the bits not yet written, never more than 14.
    value = ((value << 6) | (BASE64_VALUE[body.charCodeAt(i)] ?? 0)) & 0x3fff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (value >> bits) & 0xff;
    }
  }
  return out;
}

/** Standard base64 with padding. */
export function encodeBase64(data: Uint8Array): string {
  let out = "";
  for (let i = 0; i < data.length; i += 3) {
    const a = data[i] ?? 0;
    const b = data[i + 1];
    const c = data[i + 2];
    const n = (a << 16) | ((b ?? 0) << 8) | (c ?? 0);
    out += BASE64_ALPHABET[(n >> 18) & 63];
    out += BASE64_ALPHABET[(n >> 12) & 63];
    out += b === undefined ? "=" : BASE64_ALPHABET[(n >> 6) & 63];
    out += c === undefined ? "=" : BASE64_ALPHABET[n & 63];
  }
  return out;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/is;

/** True for a `data:` URL (any case). */
export function isDataUrl(value: string): boolean {
  return value.slice(0, 5).toLowerCase() === "data:";
}

/** Percent-decoding to bytes (`%ff` is the byte 0xff, not a character); other characters are UTF-8. */
function unquoteToBytes(text: string): Uint8Array {
  const out: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < text.length; ) {
    const hex = text[i] === "%" ? text.slice(i + 1, i + 3) : "";
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      out.push(Number.parseInt(hex, 16));
      i += 3;
      continue;
    }
    const point = text.codePointAt(i) ?? 0;
    const char = String.fromCodePoint(point);
    out.push(...encoder.encode(char));
    i += char.length;
  }
  return new Uint8Array(out);
}

/** Split a `data:` URL into its media type (lower case, `""` when not declared) and its bytes. */
export function parseDataUrl(url: string, what: string): { mediaType: string; data: Uint8Array } {
  const match = DATA_URL.exec(url);
  if (match === null) throw new MediaError(`malformed data URL for ${what}`);
  const payload = match[4] ?? "";
  if (payload === "") throw new MediaError(`the data URL for ${what} holds no data`);
  const data = match[3] ? decodeBase64(payload, what) : unquoteToBytes(payload);
  return { mediaType: (match[1] ?? "").toLowerCase(), data };
}

/** An absolute URL (`scheme://...`): kept as a URL, never read. */
export const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

// The extensions whose type every Python version's `mimetypes` agrees on (the Python library guesses with it).
const EXTENSIONS: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  tif: "image/tiff",
  tiff: "image/tiff",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  pdf: "application/pdf",
  json: "application/json",
  txt: "text/plain",
  csv: "text/csv",
  html: "text/html",
  htm: "text/html",
  xml: "text/xml",
};

/** The media type a file name or URL path suggests when it starts with `prefix` (`"image/"`, `""`: any), else `""`. */
export function guessFromPath(path: string, prefix: string): string {
  let name = path;
  if (SCHEME.test(name)) name = name.replace(/^[^:]*:(\/\/[^/?#]*)?/, "").replace(/[?#].*$/s, "");
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return "";
  const guessed = EXTENSIONS[base.slice(dot + 1).toLowerCase()] ?? "";
  return guessed.startsWith(prefix) ? guessed : "";
}

/**
 * The most pixels an image may declare: Pillow's `Image.MAX_IMAGE_PIXELS` (89,478,485), the limit the Python
 * library refuses images over as decompression bombs.
 */
export const MAX_IMAGE_PIXELS = 89_478_485;

function u16be(data: Uint8Array, at: number): number {
  return ((data[at] ?? 0) << 8) | (data[at + 1] ?? 0);
}
function u16le(data: Uint8Array, at: number): number {
  return (data[at] ?? 0) | ((data[at + 1] ?? 0) << 8);
}
function u24le(data: Uint8Array, at: number): number {
  return u16le(data, at) | ((data[at + 2] ?? 0) << 16);
}
function u32be(data: Uint8Array, at: number): number {
  return u16be(data, at) * 0x10000 + u16be(data, at + 2);
}

// The width and height a JPEG's first frame header (SOFn) declares, walking the marker segments before the scan.
function jpegSize(data: Uint8Array): [number, number] | undefined {
  let at = 2;
  while (at + 4 <= data.length) {
    if (data[at] !== 0xff) return undefined;
    const marker = data[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // a fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      at += 2; // a marker with no segment
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // the end, or the scan: no frame header before it
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return at + 9 <= data.length ? [u16be(data, at + 7), u16be(data, at + 5)] : undefined;
    at += 2 + u16be(data, at + 2);
  }
  return undefined;
}

/**
 * The width and height the header of a JPEG, PNG, GIF or WEBP declares (no pixel is decoded), or undefined when the
 * header is not there to read.
 */
export function imageSize(data: Uint8Array): [number, number] | undefined {
  switch (sniffImage(data)) {
    case "image/png":
      return data.length >= 24 && ascii(data, 12, 16) === "IHDR" ? [u32be(data, 16), u32be(data, 20)] : undefined;
    case "image/gif":
      return data.length >= 10 ? [u16le(data, 6), u16le(data, 8)] : undefined;
    case "image/jpeg":
      return jpegSize(data);
    case "image/webp": {
      const chunk = ascii(data, 12, 16);
      if (chunk === "VP8X" && data.length >= 30) return [u24le(data, 24) + 1, u24le(data, 27) + 1];
      if (chunk === "VP8 " && data.length >= 30) return [u16le(data, 26) & 0x3fff, u16le(data, 28) & 0x3fff];
      if (chunk === "VP8L" && data.length >= 25) {
        const bits = u16le(data, 21) + (data[23] ?? 0) * 0x10000 + (data[24] ?? 0) * 0x1000000;
        return [(bits & 0x3fff) + 1, (Math.floor(bits / 0x4000) & 0x3fff) + 1];
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Check image bytes and return their media type: `mediaType` (the caller's word) wins; then what the magic bytes
 * say; then `hint` (a type a data URL declared). Throws {@link MediaError} for empty or unidentified bytes, and for an
 * image whose header declares more than {@link MAX_IMAGE_PIXELS} (a decompression bomb), as the Python library does.
 */
export function inspectImage(data: Uint8Array, mediaType?: string, hint?: string): string {
  if (data.length === 0) throw new MediaError("image data is empty");
  const size = imageSize(data);
  if (size !== undefined && size[0] * size[1] > MAX_IMAGE_PIXELS) {
    throw new MediaError(
      `image refused as a decompression bomb: Image size (${size[0] * size[1]} pixels) exceeds limit of ` +
        `${MAX_IMAGE_PIXELS} pixels, could be decompression bomb DOS attack.`,
    );
  }
  if (mediaType) return mediaType;
  const sniffed = sniffImage(data);
  if (sniffed !== undefined) return sniffed;
  if (hint) return hint;
  throw new MediaError("unknown image format (not JPEG, PNG, GIF or WEBP); pass mediaType to override");
}
