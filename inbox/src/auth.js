// How the browser is signed in.
// - Local stack: an HttpOnly session cookie (`baton dev` prints a one-time link); nothing here holds it.
// - Deployed (infra/capabilities/inbox.py): `/inbox/config.json` names the Cognito domain and the public
//   app client; sign-in is the authorization code flow with PKCE. The ID token is kept in memory only
//   (a reload signs in again, silently while the Cognito session lasts); only the one-time PKCE verifier
//   and state cross the redirect, in sessionStorage, and are removed on return.

let config = null; // the deployed sign-in settings, or null on the local stack
let idToken = null;
const VERIFIER = "baton.pkce.verifier";
const STATE = "baton.pkce.state";

function randomText(bytes) {
  const data = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...data)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function challengeOf(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return btoa(String.fromCharCode(...new Uint8Array(digest))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function loadConfig() {
  try {
    const response = await fetch("/inbox/config.json", { credentials: "same-origin" });
    const type = response.headers.get("content-type") || "";
    if (!response.ok || !type.includes("json")) return null;
    const data = await response.json();
    // The local stack's file names no Cognito client ({"sign_in": "session_cookie"}): the cookie signs in.
    return data && data.client_id && data.sign_in_url ? data : null;
  } catch {
    return null;
  }
}

// Sends the browser to the Cognito sign-in page (deployed only).
export async function signIn() {
  if (!config) return;
  const verifier = randomText(48);
  const state = randomText(16);
  sessionStorage.setItem(VERIFIER, verifier);
  sessionStorage.setItem(STATE, state);
  const query = new URLSearchParams({
    response_type: "code",
    client_id: config.client_id,
    redirect_uri: config.redirect_uri,
    scope: "openid email",
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: "S256",
  });
  window.location.assign(`${config.sign_in_url}/oauth2/authorize?${query}`);
}

async function redeem(code, state) {
  const verifier = sessionStorage.getItem(VERIFIER);
  const expected = sessionStorage.getItem(STATE);
  sessionStorage.removeItem(VERIFIER);
  sessionStorage.removeItem(STATE);
  window.history.replaceState(null, "", window.location.pathname + window.location.hash); // the code leaves the bar
  if (!verifier || state !== expected) return;
  const response = await fetch(`${config.sign_in_url}/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: config.client_id,
      code,
      redirect_uri: config.redirect_uri,
      code_verifier: verifier,
    }),
  });
  if (response.ok) idToken = (await response.json()).id_token || null;
}

// Run once before the first API call: reads the deployed settings and finishes a sign-in redirect.
// `redirecting` means the page is on its way to the sign-in page: render nothing, call nothing.
export async function startAuth() {
  config = await loadConfig();
  if (!config) return { deployed: false, redirecting: false };
  const params = new URLSearchParams(window.location.search);
  if (params.get("code")) await redeem(params.get("code"), params.get("state"));
  if (idToken) return { deployed: true, redirecting: false };
  await signIn();
  return { deployed: true, redirecting: true };
}

export const isDeployed = () => config !== null;

// The header the API's Cognito authorizer reads; none on the local stack (the cookie is sent instead).
export function authHeaders() {
  return idToken ? { Authorization: idToken } : {};
}
