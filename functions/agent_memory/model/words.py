"""Words that carry no meaning of their own in a query: "what did Alice say about the launch?".

A lexical match on "what", "did" or "the" finds half of any store and nothing about the memory
asked for, and BM25's weighting only softens that. The list is the usual English function words
(articles, pronouns, auxiliaries, prepositions, question words); other languages go through
unfiltered. OpenSearch's ``english`` analyzer drops its own list at query and index time.
"""

from __future__ import annotations

_LIST = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t don ll re ve d m o y
"""
STOPWORDS = frozenset(_LIST.split())
