import { isDeployed, signIn } from "./auth.js";

// Shown on a 401: the browser has no session. Locally `baton dev` prints a one-time sign-in link;
// deployed, the team's Cognito sign-in page signs the browser in.
export function SignIn() {
  if (isDeployed())
    return (
      <section className="card" aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to the inbox</h1>
        <button type="button" className="primary" onClick={() => signIn()}>
          Sign in with your team account
        </button>
      </section>
    );
  return (
    <section className="card" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in to the inbox</h1>
      <p>
        This browser is not signed in. Locally, open the one-time sign-in link that <code>baton dev</code> prints
        (“inbox … /inbox/login?code=…”); each link works once and sets a session cookie.
      </p>
    </section>
  );
}
