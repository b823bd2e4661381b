"""The word classes the capture rules are built from.

Each set is a closed class of everyday English (interjections, question words, the verbs
people talk *about the conversation* with, common imperative verbs, time adverbials), not
words of any one data set: a rule reads "a statement that starts with a greeting", never
"a statement that mentions Austin". Everything is lowercase with straight apostrophes;
the rules lowercase and straighten the text before they look words up.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The words of a space-separated list (the classes below read best as prose)."""
    return frozenset(text.split())


#: Openers that carry no content on their own. A statement made only of these is skipped;
#: one that goes on ("hey! so I adopted a dog") is read past them.
GREETINGS = words(
    "hi hello hey heya hiya howdy yo greetings morning evening gm gn bye goodbye byeee "
    "cya night goodnight"
)
GREETING_PHRASES = (
    "good morning",
    "good afternoon",
    "good evening",
    "good night",
    "see you",
    "see ya",
    "take care",
    "talk later",
    "talk tomorrow",
    "talk soon",
    "hope you",
    "hope you're",
)
THANKS = words("thanks thank thx ty tysm tyvm thanx cheers appreciated")
THANKS_PHRASES = ("thank you", "thank u", "many thanks", "appreciate it", "much appreciated")
#: Acknowledgements, reactions and discourse markers.
ACKS = words(
    "ok okay k kk cool great nice sure yes yeah yep yup ya no nope nah alright "
    "perfect awesome wow oh ah aw aww hmm hm hmmm haha hahaha hah heh ha lol lmao rofl omg "
    "ugh oops yikes yay yess yesss exactly indeed interesting gotcha noted anyway "
    "anyways well so also plus btw fyi ps tbh ngl honestly actually basically and but "
    "though sorry"
)
ACK_PHRASES = (
    "got it",
    "sounds good",
    "no worries",
    "no problem",
    "makes sense",
    "by the way",
    "heads up",
    "side note",
    "fun fact",
    "you know what",
    "not gonna lie",
    "just so you know",
    "for the record",
    "oh no",
    "oh well",
    "that said",
    "my bad",
    "my mistake",
    "my apologies",
    "my pleasure",
    "i'll be honest",
    "to be honest",
    "i must say",
    "i have to say",
    "i gotta say",
    "i must admit",
    "i have to admit",
    "i mean",
    "fair enough",
    "works for me",
    "fine by me",
    "good to me",
    "all good",
)
#: Farewells that read like statements ("I'm off to bed"): leaving the chat is not a fact.
LEAVING_PHRASES = (
    "brb",
    "be right back",
    "gotta go",
    "got to go",
    "take a break",
    "come back later",
    "off to bed",
    "signing off",
    "heading out",
    "logging off",
)
#: Openers that hand the rest of the statement over as a fact ("please remember that ...").
FACT_WRAPPERS = (
    "i forgot to mention that",
    "i forgot to mention",
    "forgot to mention that",
    "forgot to mention",
    "i should mention that",
    "i should mention",
    "i should have mentioned that",
    "i should have mentioned",
    "please remember that",
    "please remember",
    "please note that",
    "remember that",
    "remember",
    "note that",
    "keep in mind that",
    "keep in mind",
    "for context",
    "you should know that",
    "you should know",
    "just so you know",
    "just to let you know",
    "for the record",
    "fyi",
    "btw",
    "by the way",
)

QUESTION_WORDS = words(
    "what whats what's how hows how's why when whens where wheres where's who whos who's "
    "whom whose which is are am do does did can could would should will shall may might "
    "have has any anyone anybody"
)
#: "do" and "have" open questions ("do you ...", "have you ...") but also statements in
#: chat shorthand ("have a meeting at 4"); they count as question openers only before these.
QUESTION_AFTER_AUX = words("you u we i they he she it there this that these those")
AUX_OPENERS = words("do does did have has will")

HYPOTHETICAL_OPENERS = (
    "if",
    "suppose",
    "supposing",
    "imagine",
    "pretend",
    "assuming",
    "assume",
    "hypothetically",
    "what if",
    "let's say",
    "lets say",
    "say i",
    "say we",
    "in theory",
    "unless",
    "in case",
    "i was thinking",
    "i was wondering",
)

#: Verbs people give orders with. A statement opening with one (after "please", "just",
#: "now", "also") tells the assistant what to do.
IMPERATIVES = words(
    "add answer apply ask be break build calculate change check clean compare compose "
    "continue convert correct count create debug define delete describe design do draft "
    "edit explain expand expect extract find finish fix focus format generate get give go "
    "help identify ignore implement improve include keep label let list look make merge "
    "move name note open outline paraphrase pick plan play proofread provide push put "
    "read recommend refactor remind remove rename repeat replace reply respond restructure "
    "review rewrite run say search send set share shorten show simplify sort spell start "
    "stop suggest summarise summarize take teach tell test think translate try turn type "
    "update use verify walk write act"
)
#: Requests phrased as statements: "I want you to ...", "I need a recipe ...".
REQUEST_PHRASES = (
    "i want you to",
    "i need you to",
    "i'd like you to",
    "i would like you to",
    "i'd like",
    "i would like",
    "i'd love",
    "let me know",
    "let's",
    "lets",
    "make sure",
    "feel free",
    "go ahead",
    "help me",
    "don't",
    "dont",
    "do not",
    "never mind",
    "nevermind",
    "nvm",
)
#: After "I want" / "I need", these mean the user asks for something now, not a goal.
REQUEST_OBJECTS = words("a an some the more help you your this that it")

#: Verbs about the conversation itself: "I see", "I think you're right", "I meant ...".
#: Right after a first-person subject they make the statement talk, not a fact.
CHAT_VERBS = words(
    "see saw know knew think thought guess agree disagree mean meant wonder wondered "
    "understand understood hope appreciate ask asked asking figure figured suppose bet "
    "believe doubt forgot forget reckon assume care noticed notice realize realized "
    "realise realised mentioned said say"
)
#: After "I'm": states about the conversation ("I'm back", "I'm not sure", "I'm confused").
CHAT_STATES = words(
    "sure unsure confused back ready good fine ok okay done here sorry glad happy curious "
    "lost kidding joking serious listening wondering asking afraid aware impressed "
    "surprised shocked convinced following excited thrilled amazed relieved bored"
)
#: Replying is the conversation's business: "I'll be slow to reply" is no fact to keep.
CHAT_TOPICS = words(
    "reply replies replying respond responding response responses question questions "
    "attached attachment pasted screenshot"
)
#: "... the code below", "the error above": pointing into the message itself.
MESSAGE_POINTERS = words("below above")
#: A report of trouble with the work at hand ("my function returns None", "the tests are
#: failing") describes this session's problem, not the user: it is solved and gone.
TROUBLE = (
    r"\b(?:errors?|exceptions?|traceback|stack trace|segfaults?|crash(?:es|ed|ing)?|"
    r"fail(?:s|ed|ing)|failures?|broken|bugs?|timeouts?|tim(?:es|ing) out|hangs|hanging|"
    r"not working|(?:doesn't|doesnt|won't|wont|didn't|didnt) work|throws|warnings?|"
    r"keeps \w+ing|returns (?:none|null|nil|undefined|nan|an? \w+))\b"
)
#: "I have a question": the statement announces talk, not a fact.
TALK_NOUNS = words("question questions doubt request favor favour idea")

#: Words that may come between a subject and its verb ("I really don't", "we still use").
ADVERBS = words(
    "just still also always never often sometimes even already mostly really usually "
    "kinda sorta actually finally only totally barely hardly rarely now then too recently "
    "currently generally normally basically literally definitely probably seriously "
    "honestly def prob alr so very pretty quite super too both"
)
NEGATIONS = words("not never n't")

#: Subject pronouns: a short left part without one is a noun phrase ("my wife and I").
PRONOUNS = words("i i'm im i've we we're he he's she she's they they're it it's")
COMPOUND_SUBJECT_WORDS = 3

#: Verbs whose past tense is not "-ed" (so "I grew" is not made "User grews").
IRREGULAR_PAST = words(
    "was were had did went got made took came saw knew grew broke bought brought thought "
    "told said left felt kept met ran sat spoke wrote drove ate drank began became found "
    "gave lost paid sold sent spent stood taught understood won wore chose fell flew forgot "
    "hung heard held led meant rode rang rose shook slept sang swam threw woke built caught "
    "dealt dug drew fed fought forgave froze hid lent lit mistook overslept sought shone "
    "shot sank slid stole stuck struck swore swept swung tore wove wound"
)
#: Verbs spelled the same in the present and the past: read as past only beside a past marker.
#: Participles are never made third person ("i been living" -> "User been living").
PARTICIPLES = words(
    "been gone done seen known taken given written eaten driven broken chosen fallen "
    "forgotten gotten"
)
SAME_IN_PAST = words("quit read put set cut hit let hurt cost shut bet split spread")
#: "-ed" words that are present tense ("I need" -> "User needs"), past ones excepted.
PAST_EED = words("agreed freed guaranteed decreed")
#: "-ing" words that are no "-ing" form of a verb: nouns ("something like The Martian"
#: drops no subject) and bare verbs ending in "ing" ("bring it").
NOT_ING_FORMS = words(
    "something nothing anything everything thing morning evening wedding building ceiling "
    "during meeting pudding spring string king ring wing sibling darling bring sing swing "
    "sting cling fling wring"
)
PAST_MARKERS = words("ago last yesterday earlier once back when used")
#: Verbs whose third person is not just "+s".
THIRD_PERSON = {
    "have": "has",
    "do": "does",
    "go": "goes",
    "am": "is",
    "be": "is",
    "'m": "is",
    "'ve": "has",
    "don't": "doesn't",
    "dont": "doesn't",
    "haven't": "hasn't",
    "havent": "hasn't",
    "ain't": "isn't",
}
MODALS = words(
    "can can't cant cannot could couldn't will won't would wouldn't should shouldn't must "
    "may might 'll 'd"
)

#: Family said without "my" ("Mum's birthday is on Friday", "Dad just retired").
BARE_KIN = words("mom mum mommy mummy dad daddy grandma grandpa granny nana papa")

#: Nouns of work: a "we" beside one of them is the user's team, otherwise the user and
#: others (partner, family, friends: "we're getting married").
WORK_WORDS = words(
    "deploy deploys deployed ship ships shipped release releases code codebase repo repos "
    "monorepo prod production staging team teams company startup customers clients users "
    "office sprint sprints migrate migrating service services api apis app apps backend "
    "frontend database db ci build builds tests stack server servers cluster clusters "
    "product products project projects tickets pipeline infra kubernetes cloud aws gcp "
    "azure shop framework library python rust golang java typescript javascript kotlin swift "
    "django rails react postgres postgresql mysql redis kafka docker terraform use uses "
    "using work pr prs branch commits commit merges on-call rotation"
)
