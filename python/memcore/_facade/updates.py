"""Does a newly stored fact update an older one? The rule behind `similar` on store.

Cosine alone cannot tell an update ("User lives in Seattle" -> "User moved to Austin",
cosine 0.57 with MiniLM) from a fact that merely shares its topic ("User lives in Seattle"
-> "User's sister lives in Portland", 0.64). The rule reads each fact as a subject and what
is said of it (its attribute), from the text alone: no model call beyond the store's own
embedding (the word lists are English; text with no Latin letters falls back to cosine
alone).

1. The subject is the leading noun phrase, after a fronted adverbial ("For new projects,
   the user ...", "After the reorg Priya ..."), with "I"/"we"/"my"/"the user" read as
   "user". Two facts have the same subject when one's subject words all appear in the
   other, or the two share the head noun (its last word before a preposition) or the
   owner of a possessive ("User's home address" / "User's new address"). They do not when
   a relation word in one ("User's *sister*") is missing from the other, when their owners
   differ ("User's manager" / "Karen's manager"), when their proper names differ
   ("Project Atlas" / "Project Falcon", "Priya" / "Ravi"), or when the head is shared but
   a modifier tells them apart ("staging server" / "production server", "The design
   team" / "The team"). Modifiers that only date or rank ("new", "current", "home",
   "main") or say how often ("monthly") tell nothing apart.
2. The attribute is read from a small lexicon of families written from general knowledge
   (where one lives, employer or job status, role, manager, lead or owner, partner, age,
   salary, status of an application or release, commute, diet, editor, ...): "one" holds
   one value at a time, "set" many (pets, languages spoken, places visited), "value" is a
   kind of value many attributes take (a duration, a time, a price). Two facts that both
   name families and share none speak of different things.
3. Then it is an update when the two are close (cosine >= `CLOSE_COSINE`: the fact
   restated); or the new fact gives another number (digits or words: "a third", "a
   quarter of an hour") and the two are nearly close (cosine >= `NUMBER_COSINE`) or share
   a family that is more than a kind of value; or both name a family that holds one value
   ("User is a nurse" -> "User works as a paramedic"); or one says what the other denies,
   of the same attribute ("User doesn't have pets" -> "User adopted a beagle"); or the new
   fact says that something changed ("now", "moved", "switched", "swapped ... for", "no
   longer", ...), the two are at least loosely related (cosine >= `CHANGE_COSINE`) and the
   old fact is the closest one about that subject (or within `CHANGE_MARGIN` of it) -- of
   a family that holds many values, only a switch ("instead", "replaced", "quit") counts,
   unless one of the facts states a preference ("prefers", "favourite").
4. An addition ("also", "too", "another", "added") updates only a fact that counts or
   lists the members of the same set ("User has two cats" -> "User adopted another cat");
   beside a fact that names one member ("User speaks Spanish" -> "User is also learning
   Italian") it is no update.

The numbers are those of the word rule before (chosen on benches/quality/updates.jsonl);
the confusion tables are in benches/results/quality.md (`python -m benches.quality
--updates-only`) and the choices in benches/results/quality-experiments.md, section 36.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Cosine at or above which two facts about the same subject count as one fact restated.
CLOSE_COSINE = 0.8
#: Cosine at or above which a same-subject fact that announces a change counts as an update
#: (also the engine's candidate threshold: nothing below it is considered).
CHANGE_COSINE = 0.3
#: Cosine at or above which a same-subject fact giving another number than the stored one
#: counts as an update: a new value of the same quantity often comes without a change word
#: ("The newsletter passed 5,000 subscribers"). The dev half cannot tell 0.68 from 0.80 (no
#: pair falls between); 0.7 sits low in that range (benches/results/quality-experiments.md).
NUMBER_COSINE = 0.7
#: A change cue names the closest same-subject fact and those within this cosine of it.
CHANGE_MARGIN = 0.05


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _numbered(words: str, first: int) -> dict[str, float]:
    """Each word with its number, counting from `first`."""
    return {word: float(n) for n, word in enumerate(words.split(), first)}


# Letters and digits of any script; inner apostrophes, dots, @ and hyphens stay in the word
# ("user's", "D.C.", "alex@new.io", "on-call").
_WORD = re.compile(r"[^\W_][\w'’@.\-]*[^\W_]|[^\W_]")
_USER = frozenset({"user", "users", "i", "i'm", "me", "my", "mine", "we", "us", "our", "ours"})
_PRONOUNS = _word_set("i we you he she they it")
_SUBJECT_AND_VERB = _word_set("i'm we're i've we've they're you're")
# Words that make the noun after them somebody's: "my manager" is the user's.
_OWNERS = _word_set("my our your his her their")
# Read past between "is" and the name in "is now their brother Luis".
_IDENTITY_SKIP = _word_set("now still their his her my our your")
# Function words and time words that carry neither subject nor attribute.
_STOP = _word_set(
    "a an the is are was were be been being has have had of in on at to for from by with and "
    "or but as it its this that these those now just also too still their his her our we they "
    "he she them then than there here after before into over up down out off about who which "
    "what when where how all any some no not very really new old current former correction"
)
# Words that end a subject: auxiliaries and common irregular verbs (regular verbs are
# caught by their -ed/-s ending).
_VERBS = _word_set(
    "is are was were be been has have had can could will would should may might must does do "
    "did got gets get now just still also no not never and went made took gave became bought "
    "sold left put set ran met saw began kept found says said grew drove wrote spoke taught "
    "thought brought felt lost paid sent spent told won wore woke ate drank swam came chose "
    "fell flew knew rode rose sang slept quit led hit cut let cannot can't doesn't don't "
    "didn't isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't couldn't "
    "shouldn't mostly usually always often recently finally currently mainly generally "
    "typically normally rarely sometimes occasionally already only "
    # the bare forms of common verbs that are seldom nouns ("Logs go to Loki", "Deploys
    # happen on Tuesdays")
    "go come take make want like prefer live keep meet own speak know think eat happen "
    "seem become begin bring buy send teach grow leave hate enjoy belong remain sit stand"
)
# "X's <relation>" is somebody other than X.
_RELATIONS = _word_set(
    "daughter son wife husband partner brother sister mother father mom dad parent kid child "
    "children cousin colleague neighbour neighbor friend boss manager grandmother grandfather "
    "aunt uncle niece nephew roommate"
)
# Verbs too common to say which attribute a fact is about (crude singulars, as `_normal`).
_COMMON_VERBS = _word_set(
    "like love have own use want get go make do take keep need can could would will "
    "doesn't don't didn't isn't aren't wasn't can't won't never"
)
_LATIN = re.compile(r"[A-Za-z]")
_ADDITION = re.compile(
    r"\b(?:also|as well|in addition|additionally)\b|\btoo\b(?=\s*(?:[.,;:!?)]|$))", re.I
)
# Additions unless the fact also says something was replaced ("moved to another city").
_WEAK_ADDITION = re.compile(r"\b(?:another|additional|added|adds|adding)\b", re.I)
# Words that announce a change of state. "re...ed" catches renamed, relocated, rescheduled,
# rewritten, and a few words that announce nothing ("required"): measured, kept.
_CHANGE = re.compile(
    r"\b(?:now|no longer|anymore|any more|instead|new|these days|from now on|going forward|"
    r"correction|actually|changed?|switched|moved|replaced|re[a-z]+(?:ed|en)|raised|lowered|"
    r"increased|decreased|dropped|up to|down to|quit|left|stopped|gave up|sold|became|"
    r"become|becomes|got|went|back|upgraded|downgraded|migrated|promoted|transferred|hired|"
    r"resigned|retired|cancell?ed|postponed|pushed|delayed|slipped|extended|took over|"
    r"handed|broke up|divorced|married|graduated|finished|ended|over|swapped|traded|"
    r"ditched|dumped|abandoned|in favou?r of|got rid of|gave away|no more|turned|died|"
    r"passed away|gave birth|"
    # a value altered, or a new state begun
    r"shortened|lengthened|reduced|cut|ported|converted|passed to|handed over|started|"
    r"began|since|nowadays|diagnosed|engaged|split up)\b",
    re.I,
)
# The change cues that say one value took another's place: what it takes to update a fact
# of a family that holds many values ("User switched from Spanish to French", not "User
# went to Korea" beside "User has visited Japan").
_SWITCH = re.compile(
    r"\b(?:no longer|anymore|any more|instead|switched|replaced|quit|stopped|gave up|sold|"
    r"swapped|traded|ditched|dumped|abandoned|in favou?r of|got rid of|gave away|no more|"
    r"dropped|changed?|died|passed away|gave birth)\b",
    re.I,
)
# A count of the members of a set ("two cats", "3 direct reports", "a couple of bikes") and
# a list of them ("English and French", "Go, Rust").
_COUNT = re.compile(
    r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|"
    r"several|a few)\s+(?:[a-z-]+\s+)?[a-z]+s\b"
)
_LIST = re.compile(r"\w,\s*\w|\w\s+(?:and|&)\s+\w")
# A preference holds one value at a time, even of a family that holds many.
_PREFERENCE = re.compile(
    r"\b(?:prefers?|preferred|preference|favou?rite|go-to|default|main|primary|usual|"
    r"first choice|of choice)\b"
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|no longer)\b|n't\b", re.I
)
# A quantity as written: "12", "3,000", "1.2", "9:30", "70k".
_NUMBER = re.compile(r"(\d+(?:[.,:]\d+)*)(\s?(?:k|m|bn)\b)?", re.I)
_NUMBER_WORDS = {
    **_numbered("zero one two three four five six seven eight nine ten eleven twelve", 0),
    **_numbered("thirteen fourteen fifteen sixteen seventeen eighteen nineteen", 13),
    **_numbered("first second third fourth fifth sixth seventh eighth ninth tenth", 1),
    **{
        w: 10 * n
        for w, n in _numbered("twenty thirty forty fifty sixty seventy eighty ninety", 2).items()
    },
    "dozen": 12,
    "half": 0.5,
    "quarter": 0.25,
}
_SCALES = {"hundred": 100.0, "thousand": 1e3, "million": 1e6}
_SCALE_SUFFIX = {"k": 1e3, "m": 1e6, "bn": 1e9}
# "one" is a number only before a noun it counts ("one cat"), not in "the one", "one of".
_NOT_COUNTING_ONE = _word_set("the no this that which every each any")
_SUBJECT_WORDS = 4
# A fact is one statement; the rule reads no further than this into a long one, which also
# bounds what the parse cache holds.
_PARSE_CHARS = 1000

# Attribute families, written from general knowledge: "one" holds one value at a time (a
# new value replaces the old), "set" many at once (a new member adds to them), "value" is
# a kind of value many attributes take (a duration, a time, a price): sharing one is not
# being one attribute, but naming two different kinds is being two.
_OCCUPATIONS = (
    "nurse|doctor|physician|surgeon|paramedic|pharmacist|dentist|teacher|professor|lecturer|"
    "tutor|engineer|developer|programmer|designer|architect|analyst|scientist|researcher|"
    "accountant|controller|auditor|bookkeeper|lawyer|attorney|solicitor|paralegal|consultant|"
    "chef|cook|baker|barista|waiter|waitress|bartender|cashier|clerk|driver|pilot|mechanic|"
    "electrician|plumber|carpenter|firefighter|police officer|officer|soldier|farmer|writer|"
    "author|journalist|reporter|photographer|artist|musician|actor|actress|student|intern|"
    "librarian|therapist|psychologist|psychiatrist|counsell?or|social worker|veterinarian|"
    "vet|receptionist|secretary|assistant|administrator|sysadmin|sre|cto|ceo|cfo|coo|"
    "founder|co-founder|director|vp|vice president|executive|salesperson|recruiter|marketer|"
    "realtor|translator|interpreter|technician|freelancer|contractor|product manager|"
    "project manager|engineering manager|midwife|caregiver|carer|janitor|cleaner|tailor|"
    "hairdresser|barber|dietitian|nutritionist|optician|radiologist|economist|banker|trader|"
    "broker|entrepreneur|retiree|homemaker|illustrator|animator|editor|producer|coordinator|"
    "specialist|representative|advis[eo]r|planner|strategist|copywriter|surveyor|inspector|"
    "instructor|coach|trainer|lifeguard|nanny|babysitter|housekeeper|courier|butcher|florist|"
    "welder|machinist|sailor|captain|flight attendant|judge|priest|pastor|rabbi|imam|"
    "politician|diplomat|civil servant|postdoc|manager|\\w+(?:ographer|ologist|ician|"
    "iatrist|apist)"
)
_NUMBER_WORD = (
    r"\d|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|"
    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|a hundred"
)
_FAMILIES: dict[str, tuple[str, str]] = {
    "residence": (
        "one",
        r"\b(?:lives|live (?:in|at|with|near|by)|living|lived|resides?|residing|"
        r"based (?:in|out of)|home(?:town)? (?:is|was)|hometown|"
        r"(?:home|house|flat|apartment) is in|(?<!email )(?<!e-mail )"
        r"(?<!ip )(?<!web )address|relocat\w+|settled in|stay(?:s|ing)? in)\b",
    ),
    "employer": (
        "one",
        r"\b(?:works? (?:at|for)|working (?:at|for)|worked (?:at|for)|employer|employ(?:ed|s) "
        r"(?:by|at)|employee of|job at|hired (?:by|at)|company is|unemployed|out of work|"
        r"between jobs|job[- ]?hunting|looking for (?:a |an? )?(?:new )?(?:job|work)|"
        r"laid off|(?:job )?offer (?:from|at)|self-employed)\b",
    ),
    "role": (
        "one",
        r"\b(?:works? as|working as|worked as|employed as|job(?: title)?|role|position as|"
        r"profession|occupation|career|promoted|trained as|qualified as)\b|\b(?:is|am|are|was|"
        rf"as|became|become|becomes|now) (?:an? |the )?(?:[\w-]+ )?(?:{_OCCUPATIONS})s?\b",
    ),
    "manager": (
        "one",
        r"\b(?:(?:line |direct )?manager(?:'s| is| was)|boss|supervisor|reports? (?:directly )?"
        r"to|reporting to|manages (?:me|us|the user|him|her|them))\b",
    ),
    "lead": (
        "one",
        r"\b(?:led by|leads?|leading|leader|run by|maintained by|maintains|"
        r"maintainer|owned by|owner (?:is|was)|ownership|in charge|responsibl\w+|head of|"
        r"heads(?: up)?|headed(?: up)?|heading up|took over|takes over|handled by)\b",
    ),
    "partner": (
        "one",
        r"\b(?:partner|girlfriend|boyfriend|wife|husband|spouse|fianc[eé]e?|married|engaged|"
        r"dating|(?:is|am|are|was|been|still|now|stays?) single|divorced|separated|"
        r"widow(?:ed|er)?|seeing (?:someone|somebody|an? )|relationship|broke up|split up)\b",
    ),
    "status": (
        "one",
        r"\b(?:status|pending|approved|rejected|denied|under review|in review|waiting for|"
        r"awaiting|on hold|in progress|blocked|completed?|done|shipped|released|launched|"
        r"live|deprecated|archived|cancell?ed|resolved|merged|draft|submitted)\b",
    ),
    "commute": (
        "one",
        r"\b(?:commut\w+|(?:drives|driving|cycles|cycling|bikes|biking|walks|walking|rides|"
        r"riding) to (?:work|the office|school|campus)|takes the (?:train|bus|subway|tube|"
        r"metro|tram|ferry)|by (?:car|train|bus|bike|bicycle|subway|tube|metro|tram|ferry))\b",
    ),
    "age": (
        "one",
        rf"\b(?:years? old|year-old|aged? \d|age (?:is|of)|turn(?:s|ed|ing)? (?:{_NUMBER_WORD}))",
    ),
    "birthday": ("one", r"\b(?:birthday|born on|date of birth|birth date)\b"),
    "salary": (
        "one",
        r"\b(?:salary|salaries|earns?|earning|income|wages?|(?:gets|is|are|being) paid|"
        r"paid [$£€]?\d|pay (?:is|rate)|hourly rate|"
        r"day rate|makes? [$£€]?\d+|making [$£€]?\d+|compensation|raise)\b",
    ),
    "budget": ("one", r"\b(?:budget\w*|to spend|spending limit)\b"),
    "rent": ("one", r"\b(?:rent|mortgage payments?)\b"),
    "price": ("value", r"\b(?:price[sd]?|pricing|costs?|costing|charges?|fees?|sells? for)\b"),
    "duration": (
        "value",
        r"\b(?:lasts|lasted|lasting|minutes?|\d+ ?mins?|hours?|\d+ ?hrs?|(?:days?|weeks?|months?) "
        r"long|duration|length)\b",
    ),
    "schedule": (
        "value",
        r"\b(?:at \d{1,2}(?::\d\d)?(?: ?[ap]\.?m\b| ?o'clock|\s*$|(?=[,;]))|at \d{1,2}:\d\d|"
        r"at (?:noon|midnight)|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|"
        r"every (?:day|week|month|morning|evening|night|other)|daily|weekly|monthly|nightly|"
        r"fortnightly|biweekly|(?:once|twice) a|scheduled|mornings?|evenings?|[ap]\.?m\b)",
    ),
    "timezone": (
        "one",
        r"\b(?:time ?zone|(?:pacific|eastern|central|mountain|european|british) (?:standard )?"
        r"time|pst|pdt|est|edt|cst|cdt|mst|mdt|cet|cest|bst|jst|aest|utc|gmt)\b",
    ),
    "editor": (
        "one",
        r"\b(?:vim|neovim|nvim|emacs|vs ?code|visual studio|sublime text|intellij|pycharm|"
        r"webstorm|goland|xcode|helix editor|zed editor|jetbrains)\b",
    ),
    "phone": (
        "one",
        r"\b(?:iphone|pixel \d|google pixel|galaxy s\d+|samsung galaxy|android phone|oneplus|"
        r"xiaomi|nokia)\b",
    ),
    "computer": (
        "one",
        r"\b(?:macbook|thinkpad|xps|chromebook|imac|mac mini|mac studio|surface laptop|"
        r"framework laptop)\b",
    ),
    "car": (
        "one",
        r"\b(?:drives? an?|driving an?|(?:owns?|has|have|bought|buys?|got|gets?|sold|sells?|"
        r"leases?|leased) (?:an?|the|their|his|her|my|our) (?:[\w-]+ )?car|honda|toyota|tesla|"
        r"ford|bmw|audi|volkswagen|vw|subaru|nissan|hyundai|kia|volvo|mercedes|mazda|prius|"
        r"civic|corolla|camry|rav4|model [3sxy]|outback|chevy|chevrolet|jeep|"
        r"porsche|lexus)\b",
    ),
    "os": (
        "one",
        r"\b(?:windows|macos|mac os|linux|ubuntu|fedora|debian|arch linux|operating system)\b",
    ),
    "browser": ("one", r"\b(?:browser is|chrome|firefox|safari browser|brave browser|vivaldi)\b"),
    "hosting": (
        "one",
        r"\b(?:aws|amazon web services|gcp|google cloud|azure|cloud provider|digitalocean|"
        r"linode|hetzner|heroku|vercel|netlify|fly\.io|render\.com|cloudflare|"
        r"hosted (?:on|in|by|at)|hosting|deployed (?:on|to))\b",
    ),
    "ci": (
        "one",
        r"\b(?:ci|jenkins|circleci|circle ci|travis ci|github actions|gitlab ci|buildkite|"
        r"teamcity)\b",
    ),
    "tracker": (
        "one",
        r"\b(?:jira|asana|trello|clickup|github issues|youtrack|issue tracker|tracks? "
        r"(?:issues|bugs|tasks|work|tickets))\b",
    ),
    "chat": ("one", r"\b(?:slack|microsoft teams|ms teams|discord|mattermost|zulip)\b"),
    "database": (
        "one",
        r"\b(?:postgres\w*|mysql|mariadb|sqlite|mongo\w*|dynamodb|cassandra|sql server|"
        r"cockroach\w*)\b",
    ),
    "language": (
        "one",
        r"\b(?:written in|implemented in|rewritten in|ported to|programming language)\b",
    ),
    "framework": (
        "one",
        r"\b(?:react|vue|svelte|angular|django|flask|fastapi|ruby on rails|spring boot|"
        r"express\.js|next\.js|laravel|nuxt|ember|built (?:with|on)|framework)\b",
    ),
    "bank": ("one", r"\b(?:banks? (?:with|at)|bank is|bank account|credit union)\b"),
    "plan": ("one", r"\b(?:provider|carrier|isp|plan is|on the \w+ plan|tier)\b"),
    "diet": (
        "one",
        r"\b(?:diet|vegetarian|vegan|pescatarian|keto|paleo|carnivore|omnivore|plant-based|"
        r"gluten-free|dairy-free|eats? (?:meat|fish|dairy|eggs|pork|beef|chicken|seafood)|"
        r"halal|kosher)\b",
    ),
    "smoking": ("one", r"\b(?:smok\w+|cigarettes?|vap(?:e|es|ing)|nicotine|tobacco)\b"),
    "alcohol": (
        "one",
        r"\b(?:alcohol|drinks? (?:alcohol|beer|wine)|beer|wine|sober|teetotal\w*|booze)\b",
    ),
    "sleep": (
        "one",
        r"\b(?:sleeps?|sleeping|slept|bedtime|goes to bed|wakes? up|waking up|woke up)\b",
    ),
    "email": (
        "one",
        r"\b(?:e-?mail (?:address|is|was)|e-?mail address|[\w.+-]+@[\w-]+\.\w+)",
    ),
    "phone_number": (
        "one",
        r"\b(?:phone number|mobile number|cell number|reached at|call (?:me|them|him|her) at|"
        r"\d{3}[-. ]\d{4})",
    ),
    "handle": (
        "one",
        r"\b(?:(?:github|twitter|instagram|social media|slack|discord|telegram) handle|"
        r"handle is|usernames?|user name|screen name)\b",
    ),
    "name": (
        "one",
        r"\b(?:(?:is|are|was|be|been|being|now|get|gets|got|go|goes|to be) (?:named|called)|"
        r"name(?:'s| is| was)|nickname|surname|last name|first name|maiden name|codename|"
        r"code name|goes by|go by|known as|renamed|rebrand\w*)\b",
    ),
    "best_friend": ("one", r"\bbest (?:friend|mate|buddy)\b"),
    "friends": ("set", r"\b(?:friends?|buddy|buddies|pals?)\b"),
    "medication": (
        "one",
        r"\b(?:medications?|medicines?|meds|pills?|prescri\w+|dosage|insulin|"
        r"antidepressants?|takes \w+ (?:daily|every (?:day|morning|night)|twice a day))\b",
    ),
    "pets": (
        "set",
        r"\b(?:pets?|dogs?|cats?|pupp(?:y|ies)|kittens?|parrots?|hamsters?|rabbits?|"
        r"bunn(?:y|ies)|guinea pigs?|goldfish|tortoises?|turtles?|lizards?|snakes?|ferrets?|"
        r"horses?|beagles?|labradors?|poodles?|terriers?|retrievers?|spaniels?|collies?|"
        r"husk(?:y|ies)|dachshunds?|bulldogs?|chihuahuas?|greyhounds?)\b",
    ),
    "children": (
        "set",
        r"\b(?:kids?|children|child|sons?|daughters?|bab(?:y|ies)|toddlers?|twins|pregnant|"
        r"expecting)\b",
    ),
    "siblings": ("set", r"\b(?:brothers?|sisters?|siblings?)\b"),
    "languages": (
        "set",
        r"\b(?:speaks?|speaking|fluent|bilingual|native language|mother tongue)\b",
    ),
    "proglang": (
        "set",
        r"\b(?:python|java|javascript|typescript|golang|rust|kotlin|swift|scala|php|"
        r"perl|haskell|elixir|erlang|clojure|lua|ocaml|zig)\b|\bc(?:\+\+|#)(?!\w)",
    ),
    "instruments": (
        "set",
        r"\b(?:piano|guitar|violin|cello|drums|saxophone|flute|trumpet|clarinet|ukulele|harp|"
        r"instruments?)\b",
    ),
    "travel": (
        "set",
        r"\b(?:visited|been to|went to|travel+ed to|trip to|holiday in|vacation in|"
        r"vacationed)\b",
    ),
}
_FAMILY_PATTERNS = [(name, kind, re.compile(p, re.I)) for name, (kind, p) in _FAMILIES.items()]
_KIND = {name: kind for name, (kind, _) in _FAMILIES.items()}
# Families close enough that naming one and not the other is no sign of two attributes.
_GROUP = {
    "role": "job",
    "employer": "job",
    "manager": "job",
    "lead": "job",
    "residence": "home",
    "rent": "home",
    "salary": "pay",
    "budget": "pay",
}


@dataclass(frozen=True)
class _Fact:
    """What the rule reads of one fact."""

    subject: tuple[str, ...]  # content words of the leading noun phrase
    names: frozenset[str]  # the subject's names: capitalised words ("Atlas", "Priya")
    head: str  # the subject's head noun: its last word before a preposition
    owner: tuple[str, ...]  # ... up to its possessive ("user" of "User's manager")
    possessed: tuple[str, ...]  # the subject's tokens after the owner ("manager")
    predicate: str  # the tokens after the subject
    listed: bool  # the subject is a heading: "User's pets: ..."
    identity: int  # says who the subject is ("User's boss is Karen")
    words: frozenset[str]  # all content words
    said: frozenset[str]  # the content words after the subject, but common verbs
    numbers: frozenset[float | str]
    negated: bool
    families: frozenset[str]
    enumerates: bool  # counts or lists what it says of the subject ("two cats", "A and B")
    prefers: bool  # states a preference ("prefers", "favourite", "go-to"): one value at a time


def candidate_floor(new: str) -> float | None:
    """The lowest cosine at which a stored fact can be one that `new` updates (None: no
    search needed; every fact needs one now, an addition too: it updates a fact that
    counts or lists the set it adds to)."""
    del new
    return CHANGE_COSINE


def updated_facts(new: str, candidates: Sequence[tuple[str, float]]) -> list[int]:
    """Which of the stored facts (text, cosine to `new`) `new` updates, as indices into
    `candidates`, closest first.

    A change cue says that *something* about the subject changed, not what: it names the
    closest fact about the same subject (and any within `CHANGE_MARGIN` of it), so "User
    moved to Austin" names "User lives in Seattle" and not every other fact about the user.
    """
    latin = bool(_LATIN.search(new))
    fact = _parse(new[:_PARSE_CHARS])
    if _is_addition(new):
        return _completed(fact, candidates) if latin else []
    changed = bool(_CHANGE.search(new[:_PARSE_CHARS]))
    switched = bool(_SWITCH.search(new[:_PARSE_CHARS]))
    change_floor = CHANGE_COSINE
    picked: dict[int, float] = {}
    for i in sorted(range(len(candidates)), key=lambda i: -candidates[i][1]):
        old, cosine = candidates[i]
        if cosine < CHANGE_COSINE:
            break
        if not latin or not _LATIN.search(old):
            if cosine >= CLOSE_COSINE:  # another script: cosine alone
                picked[i] = cosine
            continue
        other = _parse(old[:_PARSE_CHARS])
        if not _same_subject(other, fact):
            continue
        verdict = _verdict(other, fact, cosine)
        # "User speaks Spanish" holds many values, "User prefers Spanish" one.
        many = _many(other.families & fact.families) and not (other.prefers or fact.prefers)
        if verdict is None and changed and cosine >= change_floor:
            verdict = True if not many or switched else None
        if verdict:
            picked[i] = cosine
        if verdict is not False:
            # The closest fact about the subject sets the bar for the change cue.
            change_floor = max(change_floor, min(CLOSE_COSINE, cosine - CHANGE_MARGIN))
    return sorted(picked, key=lambda i: -picked[i])


def _completed(new: _Fact, candidates: Sequence[tuple[str, float]]) -> list[int]:
    """The stored facts that an addition ("User adopted another cat", "User also speaks
    German") makes incomplete: those that count or list the members of the same set
    ("User has two cats", "User speaks English and French"), about the same subject and
    naming the same attribute family or word. A member added beside a fact that names one
    without counting ("User speaks Spanish") is no update of it."""
    picked = []
    for i in sorted(range(len(candidates)), key=lambda i: -candidates[i][1]):
        old, cosine = candidates[i]
        if cosine < CHANGE_COSINE:
            break
        if not _LATIN.search(old):
            continue
        other = _parse(old[:_PARSE_CHARS])
        if not other.enumerates or not _same_subject(other, new):
            continue
        if _meaningful(other.families & new.families) or other.said & new.said:
            picked.append(i)
    return picked


def looks_like_update(old: str, new: str, cosine: float) -> bool:
    """Whether `new` reads as an update of `old` when `old` is its closest fact."""
    return updated_facts(new, [(old, cosine)]) == [0]


def _verdict(old: _Fact, new: _Fact, cosine: float) -> bool | None:
    """True: an update; False: not one; None: the words do not decide."""
    shared = old.families & new.families
    if _two_attributes(old.families, new.families):
        return False
    if cosine >= CLOSE_COSINE:
        return True
    if _new_number(old, new) and (cosine >= NUMBER_COSINE or _meaningful(shared)):
        return True
    if any(_KIND[f] == "one" for f in shared):
        return True
    if old.negated != new.negated and (_meaningful(shared) or old.said & new.said):
        return True  # "User doesn't smoke" / "User smokes"
    return None


def _two_attributes(old: frozenset[str], new: frozenset[str]) -> bool:
    """Whether the facts name attribute families of two kinds ("works at" and "works as"
    are both a job). A kind of value (a time, a duration, a price) is often a modifier of
    another attribute ("moved to Austin last month"): it counts only between two facts
    that name nothing else ("lasts 15 minutes" / "starts at 9:30")."""
    old_core = {_GROUP.get(f, f) for f in old if _KIND[f] != "value"}
    new_core = {_GROUP.get(f, f) for f in new if _KIND[f] != "value"}
    if old_core and new_core:
        return not old_core & new_core
    return not old_core and not new_core and bool(old and new) and not old & new


def _many(shared: frozenset[str]) -> bool:
    """Whether the facts share only families that hold many values at once."""
    return bool(shared) and all(_KIND[f] == "set" for f in shared)


def _meaningful(shared: frozenset[str]) -> bool:
    return any(_KIND[f] != "value" for f in shared)


def new_number(old: str, new: str) -> bool:
    """Whether `new` states a number that `old` does not, `old` stating one too: the same
    quantity with another value ("seats 12 people" -> "seats 20"; "two kids" -> "a third")."""
    return _new_number(_parse(old[:_PARSE_CHARS]), _parse(new[:_PARSE_CHARS]))


def _new_number(old: _Fact, new: _Fact) -> bool:
    return bool(old.numbers) and bool(new.numbers - old.numbers)


def same_subject(old: str, new: str) -> bool:
    """Whether both facts are about the same person or thing (True when the text gives no
    way to tell: the reading below is for English, so other scripts fall back to cosine)."""
    if not (_LATIN.search(old) and _LATIN.search(new)):
        return True
    return _same_subject(_parse(old[:_PARSE_CHARS]), _parse(new[:_PARSE_CHARS]))


def _same_subject(old: _Fact, new: _Fact) -> bool:
    # "User's boss is Karen" says who the user's boss is: a fact about the user.
    relations = {w for f in (old, new) if not f.identity for w in f.subject} & _RELATIONS
    for relation in relations:
        if relation not in old.words or relation not in new.words:
            return False
    if old.names and new.names and not (old.names <= new.names or new.names <= old.names):
        return False  # "Project Atlas" / "Project Falcon", "Priya" / "Ravi"
    old_owned = len(old.owner) < len(old.subject)
    new_owned = len(new.owner) < len(new.subject)
    if old_owned and new_owned:
        if old.owner != new.owner:
            return False  # "User's manager" / "Karen's manager"
        # "User's phone bill" / "User's electricity bill": two things of one owner.
        return not _distinct(old, new)
    if old.head and old.head == new.head:
        # "The staging server" / "The production server", "The design team" / "The team"
        return not (_distinct(old, new) or _narrower(old, new) or _narrower(new, old))
    return set(old.subject) <= new.words or set(new.subject) <= old.words


def _distinct(old: _Fact, new: _Fact) -> bool:
    """Whether the two subjects share their head noun but each has a modifier the other
    fact never mentions ("staging server" / "production server", "rate limit for free
    users" / "... for enterprise users"); a modifier that only dates or ranks the thing
    ("new", "current", "home", "main") is no difference."""
    if old.head != new.head:
        return False
    own = set(old.subject) - new.words - _LENIENT - {old.head}
    other = set(new.subject) - old.words - _LENIENT - {new.head}
    return bool(own) and bool(other)


def _narrower(a: _Fact, b: _Fact) -> bool:
    """Whether `a`'s subject is a kind of `b`'s: a modifier `b` never mentions that does
    more than date or rank it or say how often ("The design team" / "The team", but "The
    monthly bill" / "The bill")."""
    return bool(set(a.subject) - b.words - _LENIENT - _PERIODIC - {a.head, "user"})


def _names(subject: list[str]) -> frozenset[str]:
    """The capitalised words of a subject's tokens that are no function word, but its
    first, capitalised for opening the sentence, unless it is the whole subject or its
    owner ("Project Atlas": {"atlas"}; "Priya", "Priya's manager": {"priya"}; "Test
    coverage": none)."""
    found = set()
    for k, token in enumerate(subject):
        word = _normal(token)
        if not token[:1].isupper() or word is None or word == "user":
            continue
        if k > 0 or len(subject) == 1 or _possessive(token):
            found.add(word)
    return frozenset(found)


def subject(text: str) -> list[str]:
    """The content words of the leading noun phrase, normalised (at most four)."""
    return list(_parse(text[:_PARSE_CHARS]).subject)


def _is_addition(text: str) -> bool:
    head = text[:_PARSE_CHARS]
    if _ADDITION.search(head):
        return True
    return bool(_WEAK_ADDITION.search(head)) and not _CHANGE.search(head)


# The same stored facts come back as candidates store after store: parse each once.
@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> _Fact:
    tokens = _WORD.findall(text)
    lead = _lead_end(text, tokens)
    if lead:  # "After the remodel the room seats 20": the adverbial goes last
        tokens = [*tokens[lead:], *tokens[:lead]]
        text = " ".join(tokens)
    end, listed = _subject_end(text, tokens)
    turned = _inverted(tokens, end)
    if turned is not None:  # "Karen is my manager": "my manager is Karen"
        tokens, end, listed = turned, _subject_end(" ".join(turned), turned)[0], False
    subject_words = tuple(w for w in map(_normal, tokens[:end]) if w is not None)
    owner_end = end
    for j in range(end - 1, -1, -1):
        if _possessive(tokens[j]) or (tokens[j].lower() in _OWNERS and j + 1 < end):
            owner_end = j + 1
            break
    identity = _identity(tokens[end : end + 4])
    # The families are read from what is said of the subject: not from an owner ("her
    # spouse's name"), nor from a relation the fact is about ("User's wife works at ..."),
    # nor from the value of "<attribute> is <value>" ("... contact is their brother Luis").
    if identity:
        kept = [*tokens[owner_end:end], "is", "named" if identity == 2 else ""]
    elif set(subject_words) & _RELATIONS:
        kept = tokens[end:]
    else:
        kept = [t for t in tokens if not _possessive(t)]
    said = " ".join(kept).lower().replace("’", "'")
    low = text.lower().replace("’", "'")
    predicate = [w for w in map(_normal, tokens[end:]) if w is not None]
    return _Fact(
        subject=subject_words[:_SUBJECT_WORDS],
        names=_names(tokens[:end]),
        head=_head(tokens[:end]),
        owner=tuple(w for w in map(_normal, tokens[:owner_end]) if w is not None),
        possessed=tuple(tokens[owner_end:end]),
        predicate=" ".join(tokens[end:]),
        listed=listed,
        identity=identity,
        words=frozenset(w for w in map(_normal, tokens) if w is not None),
        said=frozenset(predicate) - _COMMON_VERBS - {"user"},
        numbers=_numbers(low),
        negated=bool(_NEGATION.search(low)),
        families=_families(said),
        prefers=bool(_PREFERENCE.search(low)),
        enumerates=listed
        or bool(_COUNT.search(low) or _LIST.search(" ".join(tokens[end:]).lower())),
    )


@functools.lru_cache(maxsize=4096)
def _families(said: str) -> frozenset[str]:
    """The attribute families a text names (lower case)."""
    return frozenset(name for name, _, p in _FAMILY_PATTERNS if p.search(said))


def _inverted(tokens: list[str], end: int) -> list[str] | None:
    """The tokens of "<name> is <owner>'s <attribute>" in the order "<owner>'s <attribute>
    is <name>", or None for any other fact."""
    if end == 0 or end + 2 > len(tokens) or tokens[end].lower() not in ("is", "was"):
        return None
    rest = tokens[end + 1 :]
    start = next((k for k, t in enumerate(rest) if t.lower() not in ("now", "still", "the")), 0)
    if not (_possessive(rest[start]) or rest[start].lower() in ("my", "our")):
        return None
    return [*rest, tokens[end], *tokens[:end]]


def _identity(after_subject: list[str]) -> int:
    """Whether the words after a subject name who or what it is: 1 for "is Karen", "is
    now Omar", "is their brother Luis"; 2 for "is called Biscuit"; 0 for neither."""
    words = [w for w in after_subject if w.lower() not in _IDENTITY_SKIP]
    if len(words) < 2 or words[0].lower() not in ("is", "was", "are", "were"):
        return 0
    if words[1].lower() in ("named", "called"):
        return 2
    names = [w for w in words[1:] if w.lower() not in _RELATIONS]
    return 1 if names and names[0][:1].isupper() else 0


# Words that open a fronted adverbial ("For new projects, the user ...", "Going forward the
# user ...", "After the reorg Priya ..."), and the one-word ones ("Now the user ...").
_LEAD_OPENERS = _word_set(
    "for after before since going these this from as in on at during until starting "
    "following last next over throughout with without by when once"
)
_LEAD_WORDS = _word_set(
    "now today recently lately currently nowadays meanwhile finally eventually suddenly "
    "yesterday lastly originally initially"
)
# Words that start the subject after such an adverbial.
_SUBJECT_OPENERS = _word_set("the user user's i we my our his her their")
_LEAD_MAX = 8
# Prepositions: a subject's head noun is its last word before one ("rate limit for ...").
_PREPOSITIONS = _word_set("for of in on at with from to by about under over")
# Modifiers that say how often: a narrower subject only beside another such modifier.
_PERIODIC = _word_set("hourly daily nightly weekly fortnightly monthly quarterly yearly annual")
# Modifiers that date or rank a thing rather than tell it from another one.
_LENIENT = _word_set(
    "new old current former previous latest present home main primary usual regular "
    "default preferred favourite favorite actual official"
)


def _lead_end(text: str, tokens: list[str]) -> int:
    """How many tokens a fronted adverbial takes before the subject (0: none): up to a
    comma, else up to the first word that opens a subject (an article, a possessive, "I",
    "the user", then a capitalised name) after the adverbial's own first noun."""
    if len(tokens) < 3:
        return 0
    first = tokens[0].lower()
    if first in _LEAD_WORDS:
        return 1
    if first not in _LEAD_OPENERS:
        return 0
    comma = text.find(",")
    if comma > 0:
        before = len(_WORD.findall(text[:comma]))
        if 1 < before <= _LEAD_MAX and before < len(tokens) - 1:
            return before
    window = range(2, min(len(tokens) - 1, _LEAD_MAX + 1))
    for opens in (_opens_subject, _capitalised):
        for k in window:
            if opens(tokens[k]):
                between = [t.lower() for t in tokens[1:k]]
                return 0 if any(t in _VERBS for t in between) else k
    return 0


def _opens_subject(token: str) -> bool:
    return token.lower().replace("’", "'") in _SUBJECT_OPENERS


def _capitalised(token: str) -> bool:
    return token[:1].isupper()


def _head(subject: list[str]) -> str:
    """The head noun of a subject's tokens: the last content word before a preposition."""
    words = []
    for token in subject:
        if token.lower() in _PREPOSITIONS:
            break
        word = _normal(token)
        if word is not None:
            words.append(word)
    return words[-1] if words else ""


def _subject_end(text: str, tokens: list[str]) -> tuple[int, bool]:
    """How many tokens the leading noun phrase takes, and whether a colon ends it (a
    heading: "User's pets: ...")."""
    colon = text.find(":")
    limit = len(_WORD.findall(text[:colon])) if colon > 0 else len(tokens)
    previous = ""
    for i, token in enumerate(tokens[:limit]):
        if i > 0 and _ends_subject(token, previous):
            return i, False
        if token.lower().replace("’", "'") in _SUBJECT_AND_VERB:
            return i + 1, False
        previous = token
    return limit, limit < len(tokens)


def _ends_subject(token: str, previous: str) -> bool:
    low = token.lower()
    if low in _VERBS:
        return True
    if previous.lower() in _PRONOUNS and token.islower():  # "We ditched", "I live"
        return True
    # A lower-case -ed/-s word after a noun is a verb ("User lives", "Staging was migrated");
    # after a possessive or a function word it is still the noun phrase ("user's parents").
    if not token.islower() or _possessive(previous) or previous.lower() in _STOP:
        return False
    return low.endswith("ed") or (low.endswith("s") and not low.endswith("ss"))


def _normal(token: str) -> str | None:
    """The token as a comparable word, or None for a function word."""
    word = token.lower().replace("’", "'").rstrip(".")
    if _possessive(word):
        word = word[:-2]
    if word in _USER:
        return "user"
    if word in _STOP:
        return None
    # A crude singular, so "uploads" meets "upload", "managers" "manager" and "allergies"
    # "allergy".
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word


def _possessive(token: str) -> bool:
    return token.lower().replace("’", "'").endswith("'s")


def _numbers(low: str) -> frozenset[float | str]:
    """The quantities a fact states: digits as written ("9:30", "3,000" as 3000, "70k" as
    70000) and number words ("thirty-five", "a dozen", "third")."""
    found: set[float | str] = set()
    for digits, scale in _NUMBER.findall(low):
        if ":" in digits:
            found.add(digits)
            continue
        try:
            amount = float(digits.replace(",", ""))
        except ValueError:  # "1.2.3"
            found.add(digits)
            continue
        found.add(amount * _SCALE_SUFFIX.get(scale.strip(), 1))
    _spelled_numbers(re.findall(r"[a-z]+", low), found)
    return frozenset(found)


def _spelled_numbers(words: list[str], found: set[float | str]) -> None:
    value: float | None = None
    for k, word in enumerate(words):
        number = _NUMBER_WORDS.get(word)
        if word == "one" and (
            (k > 0 and words[k - 1] in _NOT_COUNTING_ONE) or words[k + 1 : k + 2] == ["of"]
        ):
            number = None
        if number is not None:
            value = _joined(value, number, found)
        elif word in _SCALES and value is not None:
            value *= _SCALES[word]
        elif value is not None:
            found.add(value)
            value = None
    if value is not None:
        found.add(value)


def _joined(value: float | None, number: float, found: set[float | str]) -> float:
    """`number` read after `value`: part of it ("thirty" "five", "two hundred" "fifty") or
    the start of another (the value is kept)."""
    if value is not None:
        if (value >= 100 and number < 100) or (value >= 20 and value % 10 == 0 and number < 10):
            return value + number
        found.add(value)
    return number
