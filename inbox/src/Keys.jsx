import { useEffect, useRef } from "react";

export const KEYS = [
  ["j", "move down the list"],
  ["k", "move up the list"],
  ["enter", "open the focused item"],
  ["a", "answer the focused question with its first option; approve a tool call"],
  ["r", "answer the focused question with its second option; deny a tool call (asks the reason)"],
  ["x", "select the focused question or tool call for a bulk action"],
  ["b", "go to the bulk actions (then a preview: enter sends, esc cancels)"],
  ["/", "search"],
  ["esc", "leave the search (or any filter) so the keys above work again"],
  ["?", "show or hide this list"],
];

export function KeysHelp({ onClose }) {
  const close = useRef(null);
  useEffect(() => close.current && close.current.focus(), []);
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-labelledby="keys-title">
      <div className="card">
        <h2 id="keys-title">Keyboard shortcuts</h2>
        <p>Single keys work outside text fields; switch them off with “Shortcuts” at the top.</p>
        <dl className="keys">
          {KEYS.map(([key, what]) => (
            <div key={key}>
              <dt>
                <kbd>{key}</kbd>
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
        <button type="button" ref={close} onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}
