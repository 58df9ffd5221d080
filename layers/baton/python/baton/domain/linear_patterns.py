"""JSON Schema `pattern` and `patternProperties` keys run by a linear-time engine: RE2 (`google-re2`).

fastjsonschema turns a schema into Python code that matches those regexes with Python's `re`, which
backtracks: `^(a+)+$` against 27 characters took 4 s, doubling per character (issue 29). `compile_schema`
is `fastjsonschema.compile` with the draft's code generator taught to compile each of them with RE2
instead (`_LinearPatterns`), so matching costs time linear in the text, whatever the pattern. Its
`required` check (a required name that no property or pattern allows) searched with `re` while
generating; it does so with RE2 here too. So no regex of the schema's reaches Python's `re`.

RE2 has no backreferences, lookarounds or conditionals (they are what makes matching exponential), so a
pattern holding one is refused when the schema is checked (`schema_limits.check_patterns`), with a 422
that says why, as is one too large for `MAX_PATTERN_MEMORY`. JSON Schema patterns are ECMA-262
regexes; RE2 reads the common part alike, `$` included (the end of the text only, as in ECMA-262 without
the `m` flag, where Python's `$` also matched before a final newline: fastjsonschema rewrote it as `\\Z`).
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from baton.domain.json_input import with_valid_text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from fastjsonschema.draft04 import CodeGeneratorDraft04

# RE2's budget per compiled pattern (its program and its DFA cache; a search that fills the cache goes
# on at NFA speed, still linear). 4 MiB takes `^[\p{L} ]{1,200}$` (a quarter of a million instructions);
# RE2's default is 8 MiB. A schema's patterns together get MAX_SCHEMA_PROGRAM_SIZE (schema_limits.py).
MAX_PATTERN_MEMORY = 4 << 20

# RE2's words for a pattern that is not a regular expression at all (the rest name what RE2 does not do).
_SYNTAX_ERRORS = (
    "missing ]",
    "missing )",
    "unexpected )",
    "trailing \\",
    "invalid character class",
    "missing argument to repetition operator",
    "bad repetition operator",
    "invalid UTF-8",
    "invalid named capture group",
)


class PatternError(ValueError):
    """A pattern RE2 does not compile; `not_a_regex` when it is not a regular expression at all."""

    def __init__(self, reason: str, *, not_a_regex: bool) -> None:
        super().__init__(reason)
        self.reason, self.not_a_regex = reason, not_a_regex


class LinearPattern:
    """A compiled pattern with the one method fastjsonschema's generated code calls."""

    __slots__ = ("_regexp", "pattern")

    def __init__(self, pattern: str, regexp: Any) -> None:
        self.pattern, self._regexp = pattern, regexp

    @property
    def program_size(self) -> int:
        """RE2's instructions for it (about 16 bytes each): what the pattern costs in memory."""
        return int(self._regexp.programsize)

    def search(self, text: str) -> bool:
        try:
            return self._regexp.search(text) is not None
        except UnicodeEncodeError:  # a lone surrogate (refused at the door; stored before that, read as U+FFFD)
            return self._regexp.search(with_valid_text(text)) is not None


def _options() -> Any:
    import re2

    options = re2.Options()
    options.max_mem = MAX_PATTERN_MEMORY
    options.log_errors = False  # a refused pattern is the caller's answer, not a line on stderr
    return options


@lru_cache(maxsize=1024)
def linear_pattern(pattern: str) -> LinearPattern:
    """`pattern` compiled by RE2; PatternError when RE2 refuses it."""
    import re2  # loaded with the first jsonSchema, as fastjsonschema is (a cold start without one skips it)

    if not isinstance(pattern, str):
        raise PatternError(f"a pattern is a string, got {type(pattern).__name__}", not_a_regex=True)
    try:
        return LinearPattern(pattern, re2.compile(pattern, _options()))
    except re2.error as err:
        reason = err.args[0].decode("utf-8", "replace") if err.args and isinstance(err.args[0], bytes) else str(err)
        raise PatternError(reason, not_a_regex=reason.startswith(_SYNTAX_ERRORS)) from None
    except UnicodeEncodeError:
        raise PatternError("the pattern is not valid Unicode (a lone surrogate)", not_a_regex=True) from None


def _linear(generator_class: type[CodeGeneratorDraft04]) -> type[CodeGeneratorDraft04]:
    """The draft's code generator with RE2 for every regex of the schema."""
    from fastjsonschema import JsonSchemaDefinitionException

    class _LinearPatterns(generator_class):  # type: ignore[valid-type, misc]
        _definition: dict[str, Any]  # the subschema being generated (unannotated in fastjsonschema)

        def generate_pattern(self) -> None:
            # fastjsonschema's, with the pattern compiled by RE2 (and `$` left as it is: see the module doc)
            pattern = self._definition["pattern"]
            self._compile_regexps[pattern] = linear_pattern(pattern)
            with (
                self.l("if isinstance({variable}, str):"),
                self.l("if not REGEX_PATTERNS[{}].search({variable}):", repr(pattern)),
            ):
                self.exc("{name} must match pattern {}", self.e(pattern), rule="pattern")

        def generate_pattern_properties(self) -> None:
            # fastjsonschema's, with each key compiled by RE2
            self.create_variable_is_dict()
            with self.l("if {variable}_is_dict:"):
                self.create_variable_keys()
                patterns = self._definition["patternProperties"]
                if patterns == {}:
                    return
                for pattern in patterns:
                    self._compile_regexps[pattern] = linear_pattern(pattern)
                with self.l("for {variable}_key, {variable}_val in {variable}.items():"):
                    for pattern, definition in patterns.items():
                        with self.l("if REGEX_PATTERNS[{}].search({variable}_key):", repr(pattern)):
                            with self.l("if {variable}_key in {variable}_keys:"):
                                self.l("{variable}_keys.remove({variable}_key)")
                            self.generate_func_code_block(
                                definition,
                                f"{self._variable}_val",
                                f"{self._variable_name}.{{{self._variable}_key}}",
                                clear_variables=True,
                            )

        def generate_required(self) -> None:
            # fastjsonschema's refuses a required name no property or pattern allows, searching with `re`:
            # the same refusal with RE2, then its code generated without that search.
            definition = self._definition
            required, patterns = definition.get("required"), definition.get("patternProperties") or {}
            if definition.get("additionalProperties", True) is False and isinstance(required, list):
                allowed = definition.get("properties") or {}
                not_possible = [
                    name
                    for name in required
                    if name not in allowed and not any(linear_pattern(p).search(name) for p in patterns)
                ]
                if not_possible:
                    raise JsonSchemaDefinitionException(
                        f"{self._variable}: items {not_possible} are required but not allowed"
                    )
            self._definition = {**definition, "additionalProperties": True}
            try:
                super().generate_required()
            finally:
                self._definition = definition

    _LinearPatterns.__name__ = f"Linear{generator_class.__name__}"
    return _LinearPatterns


_LINEAR_GENERATORS: dict[str, type[CodeGeneratorDraft04]] = {}  # by the draft's generator's name


def _generator_for(generator_class: type[CodeGeneratorDraft04]) -> type[CodeGeneratorDraft04]:
    linear = _LINEAR_GENERATORS.get(generator_class.__name__)
    if linear is None:
        linear = _LINEAR_GENERATORS.setdefault(generator_class.__name__, _linear(generator_class))
    return linear


def compile_schema(
    definition: dict[str, Any],
    *,
    handlers: Mapping[str, Callable[[str], Any]],
    formats: Mapping[str, Callable[[str], bool]],
    use_default: bool = True,
) -> Callable[[Any], Any]:
    """`fastjsonschema.compile(definition, handlers, formats, use_default)`, its regexes in RE2."""
    import fastjsonschema
    from fastjsonschema.ref_resolver import RefResolver

    resolver = RefResolver.from_schema(definition, handlers=handlers, store={})
    generator_class = _generator_for(fastjsonschema._get_code_generator_class(definition))
    generator = generator_class(definition, resolver=resolver, formats=formats, use_default=use_default)
    global_state = generator.global_state
    exec(generator.func_code, global_state)  # as fastjsonschema.compile: no local state, so it can recurse
    validate: Callable[..., Any] = global_state[resolver.get_scope_name()]
    return partial(validate, custom_formats=formats) if formats else validate
