"""Write-time supersession (`supersession.rules.claims`): the issue's own examples, restatements and
facts that both hold, and a property: a value stated again with any other value is an update."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.supersession.rules.claims import Relation, claims, relate
from agent_memory.supersession.rules.shape import SAME_THING, replaces, same_attribute, shape


@pytest.mark.parametrize(
    ("old", "new", "relation", "attribute"),
    [
        ("I live in Berlin, in a flat near Tempelhof.",
         "I moved to Lisbon last week, my new flat is in Alfama.", Relation.UPDATE, "residence"),
        ("My favourite drink is green tea.", "Actually I switched from green tea to black coffee.",
         Relation.UPDATE, "favourite:drink"),
        ("The quarterly review is on Friday, April 7.", "The quarterly review was moved to Monday, April 10.",
         Relation.UPDATE, "when:quarterly review"),
        ("I work at Acme as an analyst.", "I work for Acme on the payments team.",
         Relation.RESTATEMENT, "employer"),
        ("I live in Berlin.", "My sister lives in Rome.", Relation.UNRELATED, None),
        ("I live in Lisbon.", "I went to Berlin for a conference.", Relation.UNRELATED, None),
        ("I live in Lisbon.", "I work at Globex.", Relation.UNRELATED, None),
    ],
)  # fmt: skip
def test_the_relation_of_a_new_memory_to_an_older_one(
    old: str, new: str, relation: Relation, attribute: str | None
) -> None:
    # WHEN
    verdict = relate(new, old)
    # THEN
    assert (verdict.relation, verdict.attribute) == (relation, attribute)


def test_a_name_ends_where_its_capitals_end() -> None:
    # WHEN / THEN "with two cats" is not part of the city, "Porto" is
    assert [c.value for c in claims("I live in Porto with two cats.")] == ["porto"]
    assert [c.value for c in claims("I work for Wayne Enterprises on the payments team.")] == [
        "wayne enterprises"
    ]


@pytest.mark.parametrize(
    ("text", "roles"),
    [
        ("I'm after Marley flooring, which is what dance studios usually use.", []),
        ("I'm super keen to spread that energy.", []),
        ("I'm a better cook than I was.", []),
        ("I'm a member of the climbing club.", []),
        ("I'm a nurse at the county hospital.", ["nurse"]),
        ("I am now a senior engineer.", ["senior engineer"]),
        ("I work as an architect.", ["architect"]),
    ],
)
def test_a_role_is_stated_with_its_article_or_its_verb(text: str, roles: list[str]) -> None:
    # WHEN / THEN "I'm <word ending in -er>" is no job without "a"/"an" or "work as"
    assert [c.value for c in claims(text) if c.attribute == "role"] == roles


CITIES = st.sampled_from(["Berlin", "Lisbon", "Oslo", "Porto", "Kyoto", "New York", "Rio de Janeiro"])


@given(first=CITIES, second=CITIES)
def test_living_somewhere_else_is_an_update_and_the_same_place_a_restatement(first: str, second: str) -> None:
    # WHEN
    verdict = relate(f"I moved to {second} last month.", f"I live in {first}.")
    # THEN
    expected = Relation.RESTATEMENT if first == second else Relation.UPDATE
    assert (verdict.relation, verdict.attribute) == (expected, "residence")


# --- by meaning: the light shape of a statement and whether a newer one replaces an older one ---

NEAR = 0.9  # two statements as near as their vectors get when they are about the same thing


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My manager is Priya.", "My manager is Tomasz now."),
        ("I work at Initech as a software tester.", "I left Initech and joined Globex as a product manager."),
        ("I live in Berlin, Kreuzberg.", "finally unpacked the last boxes in our new flat in Lisbon"),
        ("Our weekly sync is on Mondays at 9.", "We moved the weekly sync to Thursdays at 14."),
        ("My sister lives in Bergen.", "My sister moved to Oslo for her new job."),
        ("i'm vegetarian btw", "ok so I went fully vegan last month, no more cheese for me :("),
        # "too" before a word says "very", not "also"
        ("My go-to coffee order is a flat white.",
         "I've switched to iced oat lattes, flat whites feel too heavy now."),
        # one person by another word
        ("My grandmother is in a care home in Leipzig.",
         "Oma moved in with my aunt in Dresden, the care home wasn't working out."),
        # a name opening the statement is its value, not its subject; "the old Asics" ended
        ("My running shoes are Asics Gel-Nimbus.",
         "The new Hokas are so much better for my knees, binned the old Asics."),
        ("I volunteer at the food bank on Saturdays.",
         "Saturdays are for the animal shelter now, the food bank closed in the summer."),
        # two people named together are the one word for both
        ("My parents have a flat in Leeds.", "Mum and Dad sold up and moved to Spain last spring."),
        ("My grandparents live on a farm.", "my grandma and grandpa moved into town this year"),
        # the old value named again beside a new one of its kind, with a word of beginning
        ("I work at Initech in the QA team.", "First week at Globex done, so much calmer than Initech was."),
        ("The recital is on the 3rd of May at 5.", "Got a letter, the recital is now the 10th of May."),
        # the subject named in a later clause ("our new landlord"), not the opening one
        ("My landlord is Mr. Brandt.", "The house was sold, our new landlord is a firm called Hausbau."),
        # a number said in words where the older one named a number
        ("I sleep about 6 hours a night.", "Getting a solid eight hours most nights."),
        ("My dose is 20mg a day.", "The dose is forty milligrams a day."),
        # another verb, with a word that says it changed
        ("I live in Valencia.", "We relocated to Alicante in the spring."),
        # a sentence's first capital in the possessive, used as a plain word in the older one
        ("My handicap is 18.", "Handicap's down to 11 after this season."),
    ],
)  # fmt: skip
def test_a_new_value_said_in_everyday_words_replaces_the_old_one(old: str, new: str) -> None:
    # GIVEN an older statement and a newer one of another value, near each other by meaning
    # WHEN compared, THEN the newer replaces the older
    assert replaces(shape(new), shape(old), NEAR)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Lisbon.", "Lisbon's been home for a while now and I'm not going anywhere."),  # restated
        ("I'm vegan.", "Yeah still vegan, going on three years now."),  # still holds
        ("My girlfriend is Camille.", "Camille and I just had our two year anniversary."),  # the same name
        ("We have a cat called Luna.", "We also got a dog! A little terrier called Rocket."),  # added
        ("I speak English and French.", "I've picked up enough Italian to chat with the neighbours too."),
        ("I have a flat in Stockholm.", "We bought a little summer cabin on Gotland too, for the summers."),
        ("My mum lives in York.", "My dad moved to Leeds after the divorce."),  # two people
        ("My sister Ines is a flight attendant.", "I'm a pilot now, finally."),  # hers, then mine
        # the older one names its subject; the newer names no subject, value or word of it
        ("Our book club is on Tuesdays at 7.", "The new series of my favourite quiz show starts soon."),
        ("My mum lives in York.", "Mum and Dad moved to Leeds last year."),  # one of them, then both
        ("My sister lives in Bergen.", "My sister and my brother moved to Oslo together."),
        ("My manager is Olga.", "My mentor is Raj, we meet every other week."),  # another subject
        ("My favourite food is ramen.", "My favourite drink is a negroni."),
        ("I work at Siemens.", "My husband works at Bosch."),  # another person's
        ("My car is a Toyota Yaris.", "My wife's car is a Kia EV6."),
        ("I live in Berlin.", "Can you recommend a good flat in Lisbon?"),  # a request states nothing
        # a new particular of another kind than the old value's: a detail, not a replacement
        ("I use Obsidian for notes.", "My Obsidian vault is over 2,000 notes now haha"),
        # a later clause's subject is the speaker's other thing, not the old one's
        ("My favourite food is ramen.", "Since the trip my favourite drink is gin, our new bar is Ruby."),
        # another verb and no word of change: another attribute of the same topic
        ("I live in Valencia.", "I teach in Alicante on weekdays, the bus is easy."),
        # a named person's fact, not the speaker's
        ("My birthday is on the 3rd of March.", "Tomasz's birthday is the 12th of July, need a present."),
        # one kind of thing, two of them ("the practical exam", "the written exam")
        ("I'm having driving lessons, the practical exam is in June.",
         "The written exam is booked for the 4th of May."),
        # a number in words beside a value that is no number: a detail
        ("I'm a member of the chess club.", "Chess club night again, four years and counting."),
    ],
)  # fmt: skip
def test_what_restates_adds_or_is_about_something_else_replaces_nothing(old: str, new: str) -> None:
    # GIVEN two statements however near by meaning
    # WHEN compared, THEN the newer does not replace the older
    assert not replaces(shape(new), shape(old), NEAR)


def test_statements_far_apart_by_meaning_replace_nothing() -> None:
    # GIVEN a new value that would replace the old one if the two were about the same thing
    old, new = shape("My manager is Priya."), shape("My manager is Tomasz now.")
    # WHEN they are not near by meaning, THEN nothing is replaced
    assert not replaces(new, old, SAME_THING - 0.01)
    assert replaces(new, old, SAME_THING)


@given(st.sampled_from(["also", "too", "as well", "another"]), st.sampled_from(["Rex", "Milo", "a hamster"]))
def test_a_word_that_adds_never_replaces(word: str, pet: str) -> None:
    # GIVEN a pet, then a statement that adds one with any word that adds
    old = shape("We have a cat called Luna.")
    new = shape(f"We got {pet} {word}, the kids are thrilled.")
    # THEN nothing is replaced, however near
    assert not replaces(new, old, 1.0)


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("Please send invoices to billing@fabrikam.eu from now on, the old inbox is closing.", True),
        ("Remind me to call the plumber, the tap is dripping again.", True),
        ("Please book a table at Nopi, for two.", False),  # a fragment of the request
        ("Can you recommend a good flat in Lisbon?", False),
        ("I need to renew my passport before the summer, what documents do I need?", False),
    ],
)  # fmt: skip
def test_a_request_states_something_when_another_clause_of_it_does(text: str, states: bool) -> None:
    # GIVEN a turn that asks for something
    # WHEN read for its shape, THEN it is a statement only when one of its clauses states something
    assert shape(text).statement is states


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Down to seventy-four on the scales!", {"74"}),
        ("The landlord bumped us to two thousand and forty.", {"2040"}),
        ("Doctor put me on a hundred milligrams.", {"100"}),
        ("Eleven hundred gone on the mortgage again.", {"1100"}),
        ("Standup's at ten thirty from now on.", set()),  # a time said as two numbers: no one value
        ("The old one is dead, use the new one.", set()),  # "one" alone is a pronoun
    ],
)  # fmt: skip
def test_a_number_said_in_words_is_read_as_its_digits(text: str, numbers: set[str]) -> None:
    # GIVEN a statement that says a number in words
    # WHEN read for its shape, THEN the number is among its particulars as digits
    read = shape(text)
    assert read.spelled == numbers
    assert numbers <= read.particulars


# --- at write time: a name said again beside a new one, whose fact, what is not a value ---


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the old person named again, then who does it now
        ("Our babysitter is Maja, she comes on Wednesdays.",
         "Maja went back to Krakow, so a student called Leonie does Wednesdays for us."),
        # whose fact it is named again, with the new place
        ("My brother Tariq lives in Glasgow.", "Tariq says his Cardiff flat is tiny, Glasgow was roomier."),
        ("My sister is engaged to a guy named Pete.", "My sister married Jonathan in May, Pete is history."),
    ],
)  # fmt: skip
def test_a_name_said_again_beside_a_new_one_replaces_it_at_write_time(old: str, new: str) -> None:
    # GIVEN an older statement naming someone or something, and a newer one naming it again
    # beside a new name of its kind, with no word of change
    # WHEN compared at write time (`named_anew`), THEN the newer replaces the older; without it,
    # the shared name still reads as a restatement
    assert replaces(shape(new), shape(old), NEAR, named_anew=True)
    assert not replaces(shape(new), shape(old), NEAR)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the old value beside the speaker: still together
        ("My girlfriend is Camille.", "Camille and I had dinner at that Italian place in Leith."),
        # a day is when, not a new value
        ("Our dog is called Biscuit.", "Biscuit chased the postman down the road on Monday."),
        # the named person's own thing of that name, not the speaker's
        ("My manager is Olivia.", "Olivia's manager is a guy called Derek, he's terrifying."),
        # no new name at all
        ("Our dentist is Dr. Amari.", "Dr. Amari did a filling, still can't feel my lip."),
        # another person's, whatever the verb
        ("My car is a blue Golf.", "My husband drives a silver Audi now."),
        # one of several sisters, not known to be the one the plain word names
        ("My sister lives in Bergen.", "My younger sister has settled in Tromso with her husband."),
        # what the speaker does, then a thing of theirs, and nothing said to have changed
        ("I live in Utrecht.", "The studio where I paint is in Amsterdam, I take the train over."),
        # "left" after a span of time is what remains
        ("The grant deadline is May 15.", "Two weeks left until the grant deadline on the 15th."),
        # a countdown in capitals: neither its "left" ends anything nor are its capitals names
        ("My team is the Celtics, always.", "TATUM HIT THE WINNER WITH 3 SECONDS LEFT WHAT A GAME"),
        # one more thing taken on, nothing said to have ended
        ("Our bank is Lloyds.", "We opened a savings account with Nationwide for the long term."),
        # news of one day names who was there that day, not who holds now
        ("Our vicar is Rev. Hale.", "Rev. Hale and a visiting Bishop Osei took the service this morning."),
    ],
)  # fmt: skip
def test_no_new_value_of_the_same_thing_of_the_same_holder_replaces_nothing(old: str, new: str) -> None:
    # GIVEN two statements however near by meaning
    # WHEN compared, THEN the newer does not replace the older
    assert not replaces(shape(new), shape(old), NEAR, named_anew=True)


@pytest.mark.parametrize(
    ("text", "ended", "began", "moment", "wish"),
    [
        ("Three days left on the visa, then I fly home.", False, False, False, False),
        ("Carla left the team last week.", True, False, False, False),
        ("Signed up to read with kids at the library.", False, False, False, False),
        ("Down to seventy-four on the scales!", False, True, False, False),
        ("The cat knocked my coffee over again this morning.", False, False, True, False),
        ("I'm thinking about taking a pottery class some day.", False, False, False, True),
        ("We'd love to move to Porto.", False, False, False, True),
        ("Leeds is fine, we keep saying we'll try York one day.", False, False, False, True),
        ("If I ever leave Hull it will be for the coast.", False, False, False, True),
        ("I work from home one day a week.", False, False, False, False),
        ("I didn't want to commute, so I switched teams.", True, False, False, False),  # a wish denied
        ("The council tax is going up to 1,900 in April.", True, True, False, False),
        ("Our gym is going to forty pounds a month.", True, False, False, False),
        ("The school made him switch to Greenfield.", True, False, False, False),
    ],
)  # fmt: skip
def test_what_a_statement_says_of_change_time_and_wishes(
    text: str, ended: bool, began: bool, moment: bool, wish: bool
) -> None:
    # GIVEN a statement
    # WHEN read for its shape, THEN it says a value ended or began, tells of one day, or wishes,
    # only by its words for that
    read = shape(text)
    assert (read.ended, read.began, read.moment, read.wish) == (ended, began, moment, wish)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("MY FAVOURITE BAND is Muse.", ("favourite:band", "muse")),
        ("The standup is MOVED TO Thursday.", ("when:standup", "thursday")),
        ("I Work At Globex.", ("employer", "globex")),
        ("Engaged To Marta since June!", None),  # the pattern needs "I" or "we" before it
    ],
)  # fmt: skip
def test_a_pattern_reads_its_words_in_any_letter_case(text: str, read: tuple[str, str] | None) -> None:
    # GIVEN a text whose words a pattern reads in any case (only the name keeps its capitals)
    # WHEN its claims are read (each pattern only where the words it needs are, in any case)
    found = [(c.attribute, c.value) for c in claims(text)]
    # THEN the pattern read it as it reads the same words in lower case
    assert found == ([read] if read else [])


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("Back when we lived in Hull we kept chickens.", True),
        ("When I was a student in Porto I worked in a bar.", True),
        ("We used to sail every summer as a family.", True),
        ("I used to live in Berlin, now it's Lisbon.", False),  # says what holds now
        ("I live in Hull, near the marina.", False),
    ],
)  # fmt: skip
def test_a_story_of_the_past_is_told_apart_from_what_holds_now(text: str, past: bool) -> None:
    # GIVEN a statement
    # WHEN read for its shape, THEN it tells a story of the past only when it is framed in the
    # past ("back when", "used to", "when I was") and says nothing changed
    assert shape(text).past is past


@pytest.mark.parametrize(
    ("text", "adds"),
    [
        ("We opened a savings account with Nationwide.", True),
        ("Picked up a film camera at a car boot sale.", True),
        ("Sold the shop and opened a bakery in Deal.", False),  # one thing ended, another began
    ],
)  # fmt: skip
def test_one_more_thing_taken_on_adds_unless_something_ended(text: str, adds: bool) -> None:
    # GIVEN a statement that takes something on
    # WHEN read for its shape, THEN it adds, unless it also says something ended
    assert shape(text).adds is adds


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("Please note that Brightwater are our auditors from April.", True),
        ("Please note down my new address.", False),
    ],
)  # fmt: skip
def test_a_request_to_take_note_states_what_follows(text: str, statement: bool) -> None:
    # GIVEN a request
    # WHEN read for its shape, THEN it states something when it asks to take note that it holds
    assert shape(text).statement is statement


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        # the new one opens with a word the old one says: a sentence's first word, not a name
        ("Climbing wall membership is 48 a month.", "Membership went up to fifty-five, ugh.", True),
        ("Parking at the depot costs 12 a day.", "Depot parking is 15 now.", True),
        # two capitals neither says again: two people's news
        ("Rosa left at 23:59 on the 5th.", "Sven arrived at 01:00 on the 6th.", False),
    ],
)  # fmt: skip
def test_a_capital_the_other_statement_says_as_a_word_is_no_name(old: str, new: str, same: bool) -> None:
    # GIVEN two statements that say whose fact they are only by their opening capitals
    # WHEN compared for one attribute, THEN an opening word the other one says is not read as a
    # name of another holder
    assert same_attribute(shape(new), shape(old)) is same
