// Passkeys (WebAuthn) in the browser: the server's options (JSON, binary fields base64url) to what
// navigator.credentials takes, and the credential back to JSON. The step-up: an answer the server refuses
// with `passkey_required` (a high risk approve) is sent again with an assertion for a challenge issued for
// exactly that item and that answer.
import { api } from "./api.js";

export const passkeysSupported = () => typeof window !== "undefined" && "PublicKeyCredential" in window;

const toBytes = (b64url) => {
  const base64 = b64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(b64url.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
};
const toB64url = (buffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

const descriptors = (list) => (list || []).map((c) => ({ ...c, id: toBytes(c.id) }));

function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const r = credential.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) response.attestationObject = toB64url(r.attestationObject);
  if (r.authenticatorData) response.authenticatorData = toB64url(r.authenticatorData);
  if (r.signature) response.signature = toB64url(r.signature);
  if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  return { id: credential.id, rawId: toB64url(credential.rawId), type: credential.type, response, clientExtensionResults: {} };
}

export async function createPasskey(options) {
  const publicKey = {
    ...options,
    challenge: toBytes(options.challenge),
    user: { ...options.user, id: toBytes(options.user.id) },
    excludeCredentials: descriptors(options.excludeCredentials),
  };
  return credentialJSON(await navigator.credentials.create({ publicKey }));
}

export async function getAssertion(options) {
  const publicKey = { ...options, challenge: toBytes(options.challenge), allowCredentials: descriptors(options.allowCredentials) };
  return credentialJSON(await navigator.credentials.get({ publicKey }));
}

// An answer; refused for want of a passkey: confirmed with one (the browser's prompt) and sent once more.
// `onPrompt` is told before the prompt, so the page can say why it appears.
export async function answerWithPasskey(runId, iid, answer, onPrompt) {
  try {
    return await api.answer(runId, iid, answer);
  } catch (err) {
    if (err.status !== 403 || err.body.reason !== "passkey_required" || !passkeysSupported()) throw err;
    if (onPrompt) onPrompt();
    const { options } = await api.stepUpOptions(runId, iid, answer);
    return api.answer(runId, iid, answer, await getAssertion(options));
  }
}
