import { StrictMode, useEffect, useState } from "react";
import { MeContext } from "./me.js";
import { api, signOut } from "./api.js";
import { isDeployed, startAuth } from "./auth.js";
import { SignIn } from "./SignIn.jsx";
import { createRoot } from "react-dom/client";
import { InboxList } from "./List.jsx";
import { QuestionScreen } from "./Question.jsx";
import { InterruptScreen } from "./Interrupt.jsx";
import { ReviewScreen } from "./Review.jsx";
import { ToolApprovalScreen } from "./ToolApproval.jsx";
import { RunScreen } from "./Run.jsx";
import { WaitsScreen } from "./Waits.jsx";
import { AwayMenu } from "./Away.jsx";
import { KeysHelp } from "./Keys.jsx";
import { PasskeysMenu } from "./Passkeys.jsx";
import { PushControl } from "./Push.jsx";
import "./styles.css";

// Hash routes, so the static host needs no fallback rule: #/, #/question/<run>/<id>,
// #/interrupt/<id>, #/review/<run>, #/run/<run>, #/tool/<run>/<id>, #/waits.
function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  return { screen: parts[0] || "list", args: parts.slice(1) };
}

function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

// The single-key shortcuts can be switched off (they get in the way of screen readers' own keys);
// the choice is a preference, not a secret, so it lives in localStorage.
function useShortcutsSetting() {
  const [on, setOn] = useState(() => window.localStorage.getItem("baton.shortcuts") !== "off");
  const change = (value) => {
    window.localStorage.setItem("baton.shortcuts", value ? "on" : "off");
    setOn(value);
  };
  return [on, change];
}

function Screen({ route, shortcuts }) {
  const [a, b] = route.args;
  switch (route.screen) {
    case "question":
      return <QuestionScreen runId={a} interactionId={b} />;
    case "interrupt":
      return <InterruptScreen interruptId={a} />;
    case "tool":
      return <ToolApprovalScreen runId={a} interactionId={b} />;
    case "review":
      return <ReviewScreen runId={a} />;
    case "run":
      return <RunScreen runId={a} />;
    case "waits":
      return <WaitsScreen />;
    default:
      return <InboxList shortcuts={shortcuts} />;
  }
}

function App() {
  const route = useRoute();
  const [shortcuts, setShortcuts] = useShortcutsSetting();
  const [help, setHelp] = useState(false);
  const [me, setMe] = useState(null);
  const [signedOut, setSignedOut] = useState(false);
  const [signOutError, setSignOutError] = useState(null);
  const [pushMessage, setPushMessage] = useState(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const leave = async () => {
    try {
      await signOut();
      setMe(null);
      setSignedOut(true);
    } catch (err) {
      setSignOutError(err.message);
    }
  };
  useEffect(() => {
    api.me().then(setMe, () => setMe(null));
  }, []);
  useEffect(() => {
    const onKey = (event) => {
      if (!shortcuts || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.target.closest("input, textarea, select, [contenteditable]")) return;
      if (event.key === "?") setHelp((open) => !open);
      if (event.key === "Escape") setHelp(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shortcuts]);
  return (
    <>
      <header className="top">
        <a href="#/" className="brand" aria-label="Baton inbox: all pending items">
          Baton inbox
        </a>
        <a href="#/waits" className="top-link" aria-current={route.screen === "waits" ? "page" : undefined}>
          Waits
        </a>
        {/* On a phone the settings fold behind one button, so the list starts near the top of the screen. */}
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="settings"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <nav id="settings" aria-label="Settings" className={menuOpen ? "open" : undefined}>
          {me && <span className="who-am-i">{me.principal}</span>}
          {me && me.role !== "agent" && <PushControl onMessage={setPushMessage} />}
          {me && me.role === "operator" && <AwayMenu />}
          {me && me.role === "operator" && me.passkeys && <PasskeysMenu />}
          <label className="switch">
            <input
              type="checkbox"
              checked={shortcuts}
              onChange={(e) => setShortcuts(e.target.checked)}
              aria-label="Single-key shortcuts"
            />
            Shortcuts
          </label>
          <button type="button" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts help">
            ?
          </button>
          {/* Only the local stack's cookie session has a logout route; deployed, Cognito holds the session. */}
          {me && !isDeployed() && (
            <button type="button" onClick={leave}>
              Sign out
            </button>
          )}
        </nav>
      </header>
      <main>
        {pushMessage && (
          <p className="error" role="alert">
            {pushMessage}
          </p>
        )}
        {signOutError && (
          <p className="error" role="alert">
            {signOutError}
          </p>
        )}
        <MeContext.Provider value={me}>
          {signedOut ? (
            <>
              <p role="status">Signed out: this browser's inbox session is ended.</p>
              <SignIn />
            </>
          ) : me && me.role === "agent" ? (
            <p className="error" role="alert">
              This is an agent identity ({me.principal}); the inbox is for operators.
            </p>
          ) : (
            <Screen key={`${route.screen}/${route.args.join("/")}`} route={route} shortcuts={shortcuts} />
          )}
        </MeContext.Provider>
      </main>
      {help && <KeysHelp onClose={() => setHelp(false)} />}
    </>
  );
}

startAuth()
  .catch(() => ({ redirecting: false })) // a failed sign-in exchange: the app shows its sign-in screen
  .then(({ redirecting }) => {
    if (redirecting) return;
    createRoot(document.getElementById("app")).render(
      <StrictMode>
        <App />
      </StrictMode>,
    );
  });
