import { useEffect, useState } from "react";
import { api } from "./api.js";

const WOULD = { allow: "allow", deny: "deny", ask: "ask a person" };

// One line: what a shadow policy would have decided (issue 31) and, once a person decided ("allow" or
// "deny"), whether it agrees. A shadow "ask" agrees with any person's decision: a person was asked.
export function shadowText(shadow, decided) {
  const by = shadow.rule ? `by rule ${shadow.rule}` : "no rule matched";
  const line = `Shadow policy (version ${shadow.policy_version}) would have: ${WOULD[shadow.outcome] || shadow.outcome}, ${by}`;
  if (!decided) return `${line}.`;
  return `${line}. ${shadow.outcome === "ask" || shadow.outcome === decided ? "Agrees" : "Differs from the decision"}.`;
}

// The line, read once from the run's events; nothing while there is no shadow record.
export function ShadowLine({ runId, interactionId, decided }) {
  const [shadow, setShadow] = useState(null);
  useEffect(() => {
    let live = true;
    api.shadowDecision(runId, interactionId).then(
      (found) => live && setShadow(found),
      () => live && setShadow(null), // the line is a hint: a failed read leaves it out
    );
    return () => {
      live = false;
    };
  }, [runId, interactionId]);
  if (!shadow) return null;
  const differs = decided && shadow.outcome !== "ask" && shadow.outcome !== decided;
  return (
    <p className={differs ? "shadow differs" : "shadow"} aria-label="Shadow policy">
      {shadowText(shadow, decided)}
    </p>
  );
}
