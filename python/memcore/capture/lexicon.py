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
    "good luck",
    "have fun",
    "congrats",
    "congratulations",
)
#: Well-wishing that is a greeting whole, whatever follows ("Hope you're having a good
#: day!" says nothing about the user).
GREETING_CLAUSES = (
    "hope you",
    "hope u",
    "hope ur",
    "hope all is well",
    "hope all's well",
    "hope this finds you",
    "hope everything is",
    "have a good",
    "have a great",
    "have a nice",
    "enjoy your",
)
THANKS = words("thanks thank thx ty tysm tyvm thanx cheers appreciated")
THANKS_PHRASES = ("thank you", "thank u", "many thanks", "appreciate it", "much appreciated")
#: Acknowledgements, reactions and discourse markers.
ACKS = words(
    "ok okay k kk cool great nice sure yes yeah yep yup ya no nope nah alright "
    "perfect awesome wow oh ah aw aww hmm hm hmmm haha hahaha hah heh ha lol lmao rofl omg "
    "ugh oops yikes yay yess yesss exactly indeed interesting gotcha noted anyway "
    "anyways well so also plus btw fyi ps tbh ngl honestly actually basically and but like "
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
    "you know",
    "u know",
    "as you know",
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
    "i give up",
    "turns out",
    "it turns out",
    "apparently",
    "guess what",
    "funny enough",
    "funnily enough",
    "oddly enough",
    "strangely enough",
    "you could say",
    "needless to say",
    "safe to say",
    "truth be told",
    "quick one",
    "quick update",
    "different topic",
    "on another note",
    "for what it's worth",
    "fwiw",
    "the thing is",
    "the thing is that",
    "the problem is",
    "the problem is that",
    "the issue is",
    "the issue is that",
    "the truth is",
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
    "can't talk",
    "cant talk",
    "gotta run",
    "done for today",
    "done for the day",
    "calling it a day",
    "calling it a night",
)
#: Openers that hand the rest of the statement over as a fact ("please remember that ...").
FACT_WRAPPERS = (
    "i am writing to inform you that",
    "i am writing to let you know that",
    "i'm writing to let you know that",
    "i wanted to let you know that",
    "i just wanted to let you know that",
    "just wanted to let you know that",
    "i want to let you know that",
    "just letting you know that",
    "just letting you know",
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
    "to give you some context",
    "to give you some background",
    "to give you context",
    "to give you an idea",
    "to give some context",
    "some context",
    "some background",
    "a bit of context",
    "a bit of background",
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
    "update use verify walk write act avoid skip stick ping bear forgive excuse hold "
    "wait hang bump prioritise prioritize mock handle wrap"
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
    "realise realised mentioned said say forgetting"
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
    "attached attachment pasted screenshot fix suggestion suggestions"
)
#: "... the code below", "the error above": pointing into the message itself.
MESSAGE_POINTERS = words("below above")
#: A report of trouble with the work at hand ("my function returns None", "the tests are
#: failing") describes this session's problem, not the user: it is solved and gone.
TROUBLE = (
    r"\b(?:errors?(?! handling)|exceptions?|traceback|stack trace|segfaults?|crash(?:es|ed|ing)?|"
    r"fail(?:s|ed|ing)|failures?|broken|bugs?|timeouts?|tim(?:es|ing) out|hangs|hanging|"
    r"not working|(?:doesn't|doesnt|won't|wont|didn't|didnt) work|throws|warnings?|"
    r"keeps \w+ing|returns (?:none|null|nil|undefined|nan|an? \w+)|"
    r"same (?:issue|problem|thing|result|output|err)|already tried|"
    r"(?:get|gets|getting|got|returns?|returning|throws?|throwing) (?:an? |the )?[45]\d\d|"
    r"tried (?:restarting|reinstalling|clearing|rebooting|updating|upgrading|reverting))\b"
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
    "forgotten gotten grown born flown shown thrown drawn worn torn sworn blown ridden "
    "risen spoken stolen woken"
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
PAST_MARKERS = words("ago last yesterday earlier once back when used just finally already")
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

#: Family said without "my" ("Mum's birthday is on Friday", "Dad just retired", "kid has
#: a fever"): first in a statement with a verb, they are the user's.
BARE_KIN = words(
    "mom mum mommy mummy dad daddy grandma grandpa granny nana papa kid kids wife husband "
    "hubby gf bf boyfriend girlfriend partner boss missus in-laws baby"
)
#: Pets said with "the" ("the dog's been poorly", "the cat is 14") are the user's too.
PETS = words("dog dogs cat cats puppy kitten pup")
#: "gonna be at the dentist at 2": the subject dropped before a going-to future.
GOING_TO = words("gonna gotta")

#: Nouns of work: a "we" beside one of them is the user's team, otherwise the user and
#: others (partner, family, friends: "we're getting married").
WORK_WORDS = words(
    "deploy deploys deployed ship ships shipped release releases code codebase repo repos "
    "monorepo prod production staging team teams company startup customers clients users "
    "office sprint sprints migrate migrating service services api apis app apps backend "
    "frontend database db ci build builds tests stack server servers cluster clusters "
    "product products project projects tickets pipeline infra kubernetes cloud aws gcp "
    "devs developers engineers engineering "
    "azure shop framework library python rust golang java typescript javascript kotlin swift "
    "django rails react postgres postgresql mysql redis kafka docker terraform use uses "
    "using work pr prs branch commits commit merges on-call rotation"
)

#: Auxiliaries and copulas: a finite verb whatever the subject ("my mum is", "the kids
#: have", "Dad's"), the mark of a clause where no tagger is at hand.
AUXILIARIES = words(
    "is isn't isnt are aren't arent was wasn't wasnt were weren't has hasn't hasnt have "
    "haven't havent had hadn't does doesn't doesnt do don't dont did didn't didnt will "
    "won't wont would wouldn't can can't cant could couldn't should shouldn't must may "
    "might am 'm 's 're 've 'll 'd"
)
#: Determiners, numbers and prepositions: the word after one is a noun (or an adjective),
#: never a verb ("my parents", "two kids", "of my colleagues").
NOUN_OPENERS = words(
    "the a an my our his her their its your this that these those some any no every each "
    "all both few many several most one two three four five six seven eight nine ten "
    "of in on at for with from to by about"
)
#: Openers of a noun-phrase subject after a comma or "and": "..., my machine is an M1",
#: "... and the kitchen is being renovated".
SUBJECT_DETERMINERS = words("my our the")
#: First-person words wherever they stand.
FIRST_PERSON_WORDS = words(
    "i i'm im i've ive i'll i'd me my mine myself we we're we've we'll us our ours"
)
#: Headers people put over a description of themselves or their project: the entries
#: under one are the user's ("Background:" / "- 3 person startup", "Status: out sick").
SELF_HEADERS = words(
    "background profile setup stack environment constraints status availability schedule household "
    "goals goal"
)
#: Verbs of having and habit: "dont have a car", "never drink coffee" are the speaker's,
#: as nobody orders an assistant not to own or eat anything.
LIFE_VERBS = words("have own eat drink smoke drive live speak cook like love hate enjoy")
#: "As a result", "as a rule", "as a reminder": idioms, not "I'm a ...".
AS_A_IDIOMS = words(
    "result rule whole reminder example aside matter side bonus favour favor precaution "
    "compromise workaround test joke consequence start first alternative backup treat "
    "gift general last final quick"
)
#: Words with no content of their own: a verbless phrase of only these and time words
#: ("tomorrow then", "for now") is no state of anyone.
FILLER_WORDS = words(
    "the a an for and or so then maybe perhaps probably until till til at on in by to of "
    "see you again also too just only ok okay same all one now well very from after before "
    "not no yes maybe"
)
#: Words of time, for telling a state from a time alone.
TIME_WORDS = words(
    "today tonight tonite tomorrow tmrw tmr yesterday now rn week weekend wk wknd this "
    "these next morning afternoon evening night day days lately currently moment time "
    "being atm monday tuesday wednesday thursday friday saturday sunday mon tue wed thu "
    "fri sat sun"
)
#: After "I'll", these promise something in the conversation ("I'll check the diff
#: later", "I'll try to keep up"), not a plan of the user's life.
PROMISE_VERBS = words(
    "check try look let come get send report keep test read need do give circle follow"
)
#: Nouns that persist beyond the chat: "this project", "this repo" are the user's, not a
#: pointer at something in the conversation like "this test".
STANDING_NOUNS = words(
    "repo repository project codebase monorepo team company org organisation organization "
    "job role city town country house flat apartment neighbourhood neighborhood"
)
#: Verbs that introduce what someone said; a statement ending in one is a quote's frame
#: ("My friend said" + the quote cut out).
SPEECH_VERBS = words("said says say wrote writes asked asks texted texts replied")
#: After "I'd love to", these ask for something in the chat ("I'd love to see an example").
REQUEST_VERBS = words("see hear get have know try learn read")
#: Chat shorthand spelt out in a memory, which is read and searched in full words.
SHORTHAND = {"wfh": "working from home", "ooo": "out of office"}
#: Verbs of liking whose subject chat drops: "Love hiking, hate running" is the speaker's.
LIKING_VERBS = words("love hate prefer enjoy adore dislike loathe")
#: Participles that name a state, not an act: "based in Basel" is "I'm based in Basel"
#: (where "moved to Berlin" is "I moved to Berlin").
STATE_PARTICIPLES = words(
    "based located stuck married engaged divorced separated employed unemployed settled "
    "stationed situated raised"
)
#: Adjectives (and "fan") that take a person and a preposition: "allergic to nuts", "not a
#: fan of horror", "fluent in Spanish". Verbless, they still describe the speaker.
PERSON_PREDICATES = words(
    "allergic intolerant fan fluent obsessed addicted terrified afraid scared"
)
#: Fillers chat ends a statement with.
CHAT_FILLERS = words("tbh lol lmao haha btw fyi imo imho ngl tho though jk xd fwiw")
#: The user's project, said with "the" or "this" to an assistant working on it.
PROJECT_NOUNS = words(
    "repo repository codebase monorepo project app api backend frontend database db "
    "service server team product website site stack cluster pipeline schema"
)
#: Verbs of a life an assistant has none of: first in a statement they are the user's
#: with the subject dropped ("live in Rotterdam", "own a bakery"), not orders. "work" is
#: one only before where or as what ("work at a hospital", "mostly work in Python"; not
#: "work through this step by step").
SELF_VERBS = words("live own smoke")
WORK_PLACES = words("at in as for from with remotely nights shifts part-time full-time")
#: Indefinite subjects: "... and everyone loves it" starts a clause of its own.
INDEFINITE_SUBJECTS = words("everyone everybody nobody someone somebody people everything")
#: After "I'd like to", a change in the user's own life ("start investing", "learn
#: Spanish", "move abroad") is a wish to remember; anything else is asked of the assistant.
LIFE_CHANGE_VERBS = words("start begin learn become move quit stop switch retire travel visit")
#: Fields of a profile: "Age: 32", "Location: Oslo" say something of the user as a form
#: does (a mail's "From:" and "Subject:" say nothing of them).
PROFILE_KEYS = words(
    "name age job occupation profession role title location city country hometown "
    "timezone languages diet allergies pronouns height weight birthday employer school "
    "university major degree hobbies interests pets goal goals education experience"
)
#: Artefacts of the task at hand: a past verb on one ("I changed the port", "I ran the
#: migration") reports a step of this session's work (session.py).
SESSION_ARTEFACTS = words(
    "function functions file files script code snippet import imports port config "
    "query test tests migration migrations command variable method class endpoint linter "
    "package dependency dependencies flag setting settings line lines loop regex prompt "
    "cache container env path version branch commit key token output input error server"
)
#: What one asks for now: "I need ideas for ...", "I want some tips".
HELP_NOUNS = words(
    "ideas idea tips advice suggestions recommendations names examples options feedback "
    "pointers inspiration"
)
#: A thought about the talk as a subject: "My guess is ...", "My point is ...".
TALK_SUBJECTS = words(
    "point guess understanding take thinking assumption impression hunch question concern"
)
#: Verbs of working on the task at hand, in the past: "I tried it", "I got it working".
SESSION_VERBS = words(
    "tried got ran copied pasted changed fixed installed reinstalled updated upgraded "
    "restarted rebooted tested added removed deleted set put used checked followed did "
    "cleared commented renamed replaced rewrote edited moved"
)
