"""Word lists and sentence templates for the synthetic agent-memory workload.

The statements look like what an agent stores about a user and their projects: preferences,
facts about people, incidents, decisions, reminders. Each slot list is sampled with Zipf
weights in the order written here (the first words are the frequent ones), so BM25 sees long
posting lists for common terms and short ones for rare terms, as on real text.
"""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _phrases(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split("|") if p.strip())


SLOTS: dict[str, tuple[str, ...]] = {
    "first": _words(
        "Alice Bob Carol David Emma Frank Grace Henry Isla Jack Karen Liam Maya Noah Olivia "
        "Paul Quinn Rosa Sam Tara Umar Vera Will Xena Yusuf Zoe Aaron Bella Caleb Diana Ethan "
        "Fiona George Hannah Ivan Julia Kevin Lena Marco Nina Oscar Priya Ravi Sofia Tom Uma "
        "Victor Wendy Ximena Yara Zane Amir Bianca Chen Dmitri Elena Farid Gita Hugo Ines Jonas "
        "Kira Lucas Mei Nadia Omar Pedro Rin Sven Tanya Ulla Vikram Wren Yosef Zara Anika Boris "
        "Clara Dario Eva Felix Gemma Hiro Ingrid Jamal Keiko Leon Mira Nils Ola Petra Rashid "
        "Selma Theo Ugo Valentina Wojtek Yuki Zeynep"
    ),
    "last": _words(
        "Smith Chen Garcia Patel Kim Müller Rossi Nguyen Johnson Silva Kowalski Okafor Tanaka "
        "Ivanova Larsen Dubois Haddad Novak Costa Schmidt Yamamoto Brown Singh Lopez Fischer "
        "Romano Park Jensen Moreau Ahmed Kaur Weber Ricci Sato Andersen Martin Ali Wagner Ferrari "
        "Suzuki Nielsen Bernard Hassan Becker Esposito Kobayashi Hansen Petit Khan Hoffmann "
        "Bianchi Watanabe Pedersen Durand Rahman Schulz Colombo Ito Christensen Leroy Iqbal Koch "
        "Marino Nakamura Eriksen Fontaine Malik Richter Greco Hayashi Lund Girard Sheikh Klein "
        "Conti Kato Berg Lambert Qureshi Wolf Gallo Mori Holm Faure Aziz Neumann Bruno Abe Dahl"
    ),
    "tech": _words(
        "Python TypeScript Rust Go PostgreSQL React Kubernetes Docker Redis SQLite Java Kotlin "
        "Swift Terraform GraphQL Kafka Elasticsearch MongoDB Vue Svelte Django FastAPI Flask "
        "Rails Spring Node.js Deno Bun Nginx RabbitMQ ClickHouse DuckDB Snowflake Airflow dbt "
        "Spark Pandas NumPy PyTorch TensorFlow ONNX Scala Elixir Haskell OCaml Zig C++ CMake "
        "Bazel Gradle Maven Webpack Vite esbuild Tailwind Bootstrap jQuery Angular Ember "
        "Cassandra DynamoDB Firestore Supabase Prisma SQLAlchemy Alembic Celery gRPC Protobuf "
        "Avro Parquet Arrow Polars Ray Dask Jupyter VSCode Neovim Emacs"
    ),
    "project_kind": _words(
        "frontend backend data mobile infrastructure research scripting embedded analytics "
        "testing prototyping tooling automation reporting billing search messaging payments "
        "monitoring logging security onboarding migration batch streaming desktop"
    ),
    "city": _words(
        "Seattle Austin Berlin London Paris Tokyo Toronto Lisbon Madrid Amsterdam Dublin "
        "Singapore Sydney Melbourne Boston Chicago Denver Portland Vancouver Montreal Zurich "
        "Vienna Prague Warsaw Stockholm Oslo Copenhagen Helsinki Munich Hamburg Milan Rome "
        "Barcelona Valencia Porto Athens Istanbul Cairo Nairobi Lagos Johannesburg Mumbai "
        "Bangalore Delhi Seoul Osaka Kyoto Taipei Shanghai Beijing Bangkok Jakarta Manila Auckland "
        "Wellington Lima Bogota Santiago Buenos-Aires Mexico-City Phoenix Atlanta Miami Dallas"
    ),
    "org": _words(
        "Acme Globex Initech Umbrella Hooli Stark Wayne Cyberdyne Soylent Tyrell Wonka Vandelay "
        "Gringotts Oscorp Aperture BlackMesa Massive Dynamic Virtucon Nakatomi Pied-Piper Monarch "
        "Prestige Kwik-E-Mart Duff Bluth Dunder Sterling Cooper Rekall Weyland Yoyodyne Zorg"
    ),
    "role": _phrases(
        "software engineer|data scientist|product manager|designer|site reliability engineer|"
        "engineering manager|security engineer|researcher|technical writer|QA engineer|"
        "data engineer|frontend developer|backend developer|support engineer|architect|"
        "consultant|intern|team lead|CTO|analyst"
    ),
    "component": _words(
        "scheduler gateway indexer importer exporter crawler parser renderer uploader "
        "authenticator cache queue worker dashboard notifier billing-service search-api "
        "payment-service auth-service ingestion-pipeline report-generator email-sender "
        "webhook-handler rate-limiter load-balancer migration-script backup-job cron-runner "
        "feature-flags config-loader session-store image-resizer pdf-exporter audit-log "
        "metrics-collector alert-manager sync-daemon api-client cli-tool test-harness"
    ),
    "resource": _words(
        "database disk network certificate token connection-pool memory cpu dns-record "
        "license api-key quota replica volume lock index schema cache bucket"
    ),
    "failure": _phrases(
        "ran out of space|timed out|expired|was rotated|was misconfigured|hit its limit|"
        "was locked|went read-only|lost its leader|returned stale data|was deleted by mistake|"
        "leaked connections|filled up|was throttled|dropped packets|was not renewed"
    ),
    "action": _words(
        "review update rotate archive migrate refactor document benchmark deploy rollback "
        "backup restore test audit profile upgrade downgrade clean rename split merge tag "
        "publish translate validate sign encrypt compress index reindex monitor patch"
    ),
    "artifact": _phrases(
        "API keys|release notes|design doc|changelog|test plan|runbook|budget sheet|"
        "slide deck|onboarding guide|SLA report|architecture diagram|database schema|"
        "Dockerfile|CI pipeline|Helm chart|pricing page|privacy policy|incident report|"
        "roadmap|quarterly report|user survey|style guide|access list|backup policy"
    ),
    "deadline": _phrases(
        "Friday|the end of the quarter|the next release|the board meeting|Monday morning|"
        "the code freeze|the audit|the demo|the end of the month|the holidays|the launch|"
        "the offsite|the sprint review|the customer call|the security review"
    ),
    "error": _phrases(
        "a 500 error|a 404|an empty list|a timeout|duplicate rows|a null pointer|"
        "the wrong currency|stale prices|a permission error|corrupted JSON|a 429|"
        "negative totals|mojibake|a deadlock|truncated output|the previous user's data"
    ),
    "condition": _phrases(
        "the cache is cold|two users edit at once|the input is empty|the file is over 2 GB|"
        "the timezone is not UTC|the session expires|the list has more than 1000 items|"
        "the network is slow|a field contains emoji|the job is retried|daylight saving starts|"
        "the payload is gzipped|the user is offline|the locale is German"
    ),
    "category": _words(
        "book movie album food drink sport game city band author language editor font "
        "holiday season board-game podcast TV-show dessert restaurant"
    ),
    "item": _phrases(
        "Dune|The Matrix|Abbey Road|ramen|espresso|tennis|chess|Lisbon|Radiohead|Ursula Le Guin|"
        "Rust|Vim|JetBrains Mono|Christmas|autumn|Catan|Hardcore History|The Wire|tiramisu|"
        "sushi|pizza|Blade Runner|Kind of Blue|green tea|cycling|Go|climbing|Portishead|"
        "Terry Pratchett|Fira Code|Halloween|spring|Carcassonne|Radiolab|Severance|cheesecake|"
        "tacos|Spirited Away|OK Computer|matcha|swimming|Tetris|running|Daft Punk|Iain Banks"
    ),
    "env": _words("production staging dev qa canary sandbox preview demo"),
    "outcome": _phrases(
        "the rollout went smoothly|latency doubled afterwards|we had to roll back|"
        "error rates dropped|two alerts fired|customers noticed nothing|the migration took an hour|"
        "memory use went up 20 percent|the smoke tests failed|it needed a manual fix"
    ),
    "topic": _phrases(
        "the Q3 roadmap|hiring|the on-call rotation|pricing|the data retention policy|"
        "the API redesign|performance|accessibility|the mobile launch|cost cutting|"
        "the security audit|observability|the reorg|technical debt|the customer churn|"
        "documentation|the offsite agenda|compliance|the search relevance|the new office"
    ),
    "weekday": _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday"),
    "daytime": _words("morning afternoon evening 9am 10am 2pm 4pm noon"),
    "food": _words(
        "peanuts shellfish gluten dairy eggs soy sesame strawberries kiwi celery mustard "
        "walnuts cashews lactose tomatoes garlic"
    ),
    "month": _words(
        "January February March April May June July August September October November December"
    ),
    "reason": _phrases(
        "the old one is unmaintained|it is twice as fast|the team already knows it|"
        "licensing is simpler|it has better typing|the docs are clearer|it saves memory|"
        "the vendor raised prices|it supports streaming|it runs offline"
    ),
    "pet": _words("dog cat parrot rabbit hamster turtle goldfish horse lizard ferret"),
    "skill": _words(
        "Spanish piano guitar Japanese pottery sailing photography French woodworking "
        "calligraphy salsa knitting chess statistics drawing German Mandarin baking"
    ),
    "location": _phrases(
        "the shared drive|the wiki|the infra repo|S3|the team folder|Notion|Confluence|"
        "the vault|the docs site|the release bucket|the monorepo|Google Drive"
    ),
    "adj": _words(
        "silver golden quiet rapid brave cosmic crimson lucky hidden bright frozen swift "
        "gentle ancient hollow iron lunar misty noble proud rusty solar stormy velvet wild "
        "amber azure copper emerald scarlet"
    ),
    "noun": _words(
        "falcon river harbor comet forest lantern meadow orbit phoenix quartz raven summit "
        "tiger valley willow anchor beacon canyon delta ember glacier island jungle kestrel "
        "lotus maple nebula otter pine"
    ),
}

# Slots filled by a generated value rather than a word list (see workloads._fill).
COMPUTED_SLOTS = ("person", "project", "ticket", "version", "day")

DOCUMENT_TEMPLATES: tuple[str, ...] = (
    "{person} prefers {tech} over {tech} for {project_kind} work",
    "{person} lives in {city} and works at {org} as a {role}",
    "The {component} in {project} failed because the {resource} {failure}",
    "Remember to {action} the {artifact} of {project} before {deadline}",
    "{person} asked me to {action} the {artifact} in {project}",
    "Bug {ticket} in {project}: the {component} returns {error} when {condition}",
    "{person}'s favourite {category} is {item}",
    "Deployed {project} {version} to {env}; {outcome}",
    "Meeting with {person} about {topic} moved to {weekday} {daytime}",
    "{person} is allergic to {food} and avoids {food}",
    "{project} uses {tech} with {tech} for the {component}",
    "{person} will be on vacation in {city} from {month} {day}",
    "The team decided to {action} the {component} of {project} after the review of {topic}",
    "{person} reported that the {component} is slow when {condition}",
    "Use {tech} instead of {tech} in {project} because {reason}",
    "{person} has a {pet} named {first}",
    "{person} is learning {skill} and practises every {weekday}",
    "The {artifact} for {project} is stored in {location}",
    "{person} and {person} are working on {topic} for {org}",
    "{person} moved from {city} to {city} in {month}",
)

QUERY_TEMPLATES: tuple[str, ...] = (
    "what does {person} prefer for {project_kind} work",
    "where does {person} live",
    "why did the {component} fail in {project}",
    "what do I need to {action} before {deadline}",
    "{component} returns {error}",
    "what is {person}'s favourite {category}",
    "which version of {project} is on {env}",
    "when is the meeting about {topic}",
    "what is {person} allergic to",
    "what does {project} use for the {component}",
    "when is {person} on vacation",
    "{tech} or {tech} in {project}",
    "who is working on {topic}",
    "where is the {artifact} for {project}",
    "what is the name of {person}'s {pet}",
    "is the {component} slow when {condition}",
)

RELATION_TYPES: tuple[str, ...] = (
    "works_at",
    "works_on",
    "depends_on",
    "knows",
    "owns",
    "uses",
    "reported",
    "lives_in",
)
