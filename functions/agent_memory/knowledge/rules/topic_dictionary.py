"""A tenant's topic dictionary: canonical terms and their synonyms, so one subject has one name.

Clients name the same subject many ways ("release date", "go-live", "ship date"). A tenant may
give a dictionary ``{canonical: [synonyms...]}``; then a write stores what the client sent as
``topic_raw`` and the canonical term as ``topic``, and a search finds the memories of a subject
by any of its names. Every term is compared as `normalise_topic` makes it (case- and
space-insensitive), so the dictionary holds normalised terms only.

Topics a write names that the dictionary does not know are *proposals*: counted per tenant, so an
operator can see which names are in use and add them (as a canonical term or a synonym).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from agent_memory.model.limits import MAX_TOPIC_CHARS
from agent_memory.model.records import normalise_topic

#: Bounds of one tenant's dictionary: enough for a product's vocabulary, small enough to be one
#: DynamoDB item (400 KB) and to be matched against every query in microseconds.
MAX_CANONICAL_TERMS = 500
MAX_SYNONYMS_PER_TERM = 50
MAX_TERMS = 2_000
MAX_DICTIONARY_BYTES = 256 * 1024
#: Proposals listed at most per request.
MAX_PROPOSALS_LIMIT = 500
#: A proposal not seen again for this long is dropped, so a tenant's list holds the names in use.
PROPOSAL_TTL_DAYS = 90


class TopicDictionaryError(ValueError):
    """A dictionary that would make a topic ambiguous or is too large (a 400 at the API)."""


@dataclass(frozen=True)
class TopicDictionary:
    """Canonical term -> synonyms, every term normalised; immutable, so it can be cached and shared.

    Build it with `TopicDictionary.build`, which normalises and checks: a term may belong to one
    canonical term only, or a topic would have two canonical forms.
    """

    terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, raw: Mapping[str, list[str] | tuple[str, ...]]) -> TopicDictionary:
        """Normalise and check ``raw``. Errors name terms by position (canonical term 3, its
        synonym 2), never by their text: an error body does not echo the request."""
        if len(raw) > MAX_CANONICAL_TERMS:
            raise TopicDictionaryError(f"at most {MAX_CANONICAL_TERMS} canonical terms")
        owner: dict[str, int] = {}  # term -> the position of the canonical term it belongs to
        terms: dict[str, tuple[str, ...]] = {}
        for position, (raw_canonical, raw_synonyms) in enumerate(raw.items(), start=1):
            where = f"canonical term {position}"
            canonical = _term(raw_canonical, where)
            if len(raw_synonyms) > MAX_SYNONYMS_PER_TERM:
                raise TopicDictionaryError(f"{where} has more than {MAX_SYNONYMS_PER_TERM} synonyms")
            if canonical in owner:  # twice as a canonical term, or already another term's synonym
                raise TopicDictionaryError(f"{where} is already a term of canonical term {owner[canonical]}")
            owner[canonical] = position
            synonyms: list[str] = []
            for index, raw_synonym in enumerate(raw_synonyms, start=1):
                synonym = _term(raw_synonym, f"synonym {index} of {where}")
                if synonym == canonical or synonym in synonyms:
                    continue
                if synonym in owner:
                    raise TopicDictionaryError(
                        f"synonym {index} of {where} is already a term of canonical term {owner[synonym]}"
                    )
                owner[synonym] = position
                synonyms.append(synonym)
            terms[canonical] = tuple(synonyms)
        if len(owner) > MAX_TERMS:
            raise TopicDictionaryError(f"at most {MAX_TERMS} terms in all")
        dictionary = cls(terms=terms)
        if len(dictionary.to_json().encode("utf-8")) > MAX_DICTIONARY_BYTES:
            raise TopicDictionaryError(f"the dictionary is larger than {MAX_DICTIONARY_BYTES} bytes")
        return dictionary

    @classmethod
    def from_json(cls, text: str) -> TopicDictionary:
        """A stored dictionary (it was checked when it was stored)."""
        return cls.build(json.loads(text))

    def to_json(self) -> str:
        return json.dumps({k: list(v) for k, v in self.terms.items()}, ensure_ascii=False, sort_keys=True)

    def as_dict(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in sorted(self.terms.items())}

    def __bool__(self) -> bool:
        return bool(self.terms)

    @cached_property
    def _canonical_of(self) -> dict[str, str]:
        index = {canonical: canonical for canonical in self.terms}
        for canonical, synonyms in self.terms.items():
            index.update(dict.fromkeys(synonyms, canonical))
        return index

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        """Every term as a whole phrase, longest first (so "ship date" wins over "ship")."""
        if not self._canonical_of:
            return None
        alternatives = sorted(self._canonical_of, key=lambda t: (-len(t), t))
        body = "|".join(re.escape(t).replace(r"\ ", r"\s+") for t in alternatives)
        return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)

    def canonical(self, raw: str | None) -> str | None:
        """The canonical term ``raw`` names, or None when the dictionary does not know it."""
        topic = normalise_topic(raw)
        return None if topic is None else self._canonical_of.get(topic)

    def resolve(self, raw: str | None) -> tuple[str | None, bool]:
        """``(topic, known)``: the canonical term when known, else the normalised raw topic."""
        topic = normalise_topic(raw)
        if topic is None:
            return None, True
        canonical = self._canonical_of.get(topic)
        return (canonical, True) if canonical is not None else (topic, False)

    def expand_query(self, text: str) -> str:
        """``text`` with, for every term of the dictionary it names, that term's whole group appended.

        Lexical search ORs the words of a query over content and topic, so "when is the go-live?"
        then also matches memories whose topic is the canonical "launch date" and those whose text
        says "release date". Appending (not replacing) keeps the words the client used, which still
        match a content that uses them. Groups are appended once, in the order they are named.
        """
        pattern = self._pattern
        if pattern is None:
            return text
        groups: list[str] = []
        for match in pattern.finditer(text):
            canonical = self._canonical_of[" ".join(match.group(0).split()).casefold()]
            if canonical not in groups:
                groups.append(canonical)
        if not groups:
            return text
        extra = [term for canonical in groups for term in (canonical, *self.terms[canonical])]
        return " ".join([text, *extra])


def _term(raw: str, where: str) -> str:
    term = normalise_topic(raw)
    if term is None:
        raise TopicDictionaryError(f"{where} is blank")
    if len(term) > MAX_TOPIC_CHARS:
        raise TopicDictionaryError(f"{where} is longer than {MAX_TOPIC_CHARS} characters")
    try:
        term.encode("utf-8")
    except UnicodeEncodeError:
        raise TopicDictionaryError(f"{where} is not valid Unicode (a lone surrogate)") from None
    return term


@dataclass(frozen=True, slots=True)
class TopicProposal:
    """A topic writes named that the tenant's dictionary does not know: how often, and when."""

    topic: str
    count: int
    first_seen: datetime
    last_seen: datetime
