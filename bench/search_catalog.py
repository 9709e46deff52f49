"""Generated skills with distinct, realistic descriptions, and the queries a person would type to find them.

`bench.generate` gives every skill the same sentence (fine for scanning, useless for search). Here each skill is
an action on an object in a tool or platform ("reconcile vendor invoices in NetSuite"), described the way real
SKILL.md descriptions are (what it does, related terms, "Use when ..."), and each query names the same need in
other words (synonyms, a task phrased as a question, the platform sometimes left out). The same seed gives the
same skills and queries.

    skills = catalog(2_000, distinct_tasks=True)    # no two skills share an (action, object) pair
    write(root, skills)                              # one SKILL.md per skill under root
    asked = queries(skills, 100, platform=0.4)       # [(query, index of the skill that should come first)]
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

# object: (plural used in descriptions, synonyms a person might type, related terms)
OBJECTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "invoice": ("invoices", ("bills", "vendor bills", "billing statements"), ("line items", "tax", "due dates")),
    "expense": ("expense reports", ("expense claims", "receipts", "spend"), ("per diem", "mileage", "approvals")),
    "payroll": ("payroll runs", ("salaries", "pay slips", "wages"), ("deductions", "overtime", "withholding")),
    "budget": ("budgets", ("spending plans", "cost plans"), ("variance", "forecasts", "cost centers")),
    "contract": ("contracts", ("agreements", "legal terms", "MSAs"), ("clauses", "renewals", "signatures")),
    "lead": ("sales leads", ("prospects", "potential customers"), ("scoring", "qualification", "follow-up")),
    "ticket": ("support tickets", ("help desk requests", "customer issues", "cases"), ("SLA", "priority", "triage")),
    "survey": (
        "customer surveys",
        ("questionnaires", "feedback forms", "NPS polls"),
        ("responses", "sentiment", "question design"),
    ),
    "newsletter": (
        "newsletters",
        ("email digests", "mailing list updates"),
        ("subscribers", "open rates", "unsubscribes"),
    ),
    "blog": ("blog posts", ("articles", "long-form posts"), ("headlines", "outlines", "keywords")),
    "podcast": ("podcast episodes", ("audio shows", "episodes"), ("show notes", "transcripts", "guests")),
    "webinar": ("webinars", ("online events", "live sessions"), ("registrations", "slides", "replays")),
    "resume": ("resumes", ("CVs", "job applications"), ("skills", "experience", "screening")),
    "interview": ("job interviews", ("hiring interviews", "candidate screens"), ("scorecards", "questions", "panels")),
    "onboarding": (
        "employee onboarding plans",
        ("new hire checklists", "first week plans"),
        ("accounts", "buddy programs", "equipment"),
    ),
    "timesheet": ("timesheets", ("hours logged", "time entries"), ("billable hours", "approvals", "projects")),
    "inventory": ("inventory counts", ("stock levels", "warehouse stock"), ("SKUs", "reorder points", "shrinkage")),
    "shipment": ("shipments", ("deliveries", "parcels", "freight"), ("tracking numbers", "carriers", "customs")),
    "purchase-order": ("purchase orders", ("POs", "procurement requests"), ("suppliers", "approvals", "receipts")),
    "dockerfile": ("Dockerfiles", ("container images", "docker builds"), ("layers", "base images", "caching")),
    "pipeline": ("CI pipelines", ("build pipelines", "CI jobs", "workflows"), ("stages", "artifacts", "caching")),
    "database-schema": (
        "database schemas",
        ("tables", "data models", "ERDs"),
        ("indexes", "foreign keys", "normalization"),
    ),
    "sql-query": ("SQL queries", ("database queries", "reports in SQL"), ("joins", "indexes", "query plans")),
    "api": ("REST APIs", ("endpoints", "web services", "HTTP APIs"), ("routes", "pagination", "versioning")),
    "log": ("application logs", ("log files", "server logs", "traces"), ("errors", "patterns", "retention")),
    "alert": ("monitoring alerts", ("pages", "on-call alarms", "notifications"), ("thresholds", "noise", "runbooks")),
    "dashboard": ("dashboards", ("charts", "KPI boards", "reports"), ("metrics", "filters", "refresh")),
    "certificate": ("TLS certificates", ("SSL certs", "HTTPS certificates"), ("expiry", "renewal", "chains")),
    "secret": ("secrets", ("API keys", "credentials", "passwords"), ("rotation", "vaults", "leaks")),
    "dependency": ("dependencies", ("packages", "libraries", "third-party modules"), ("versions", "CVEs", "lockfiles")),
    "unit-test": ("unit tests", ("test cases", "tests"), ("fixtures", "mocks", "coverage")),
    "migration": (
        "database migrations",
        ("schema changes", "migration scripts"),
        ("rollbacks", "downtime", "backfills"),
    ),
    "feature-flag": ("feature flags", ("toggles", "feature switches"), ("rollouts", "targeting", "cleanup")),
    "backup": ("backups", ("snapshots", "restore points"), ("retention", "restores", "encryption")),
    "dns-record": ("DNS records", ("domain records", "CNAMEs", "nameservers"), ("TTL", "propagation", "MX records")),
    "slide-deck": ("slide decks", ("presentations", "slides", "pitch decks"), ("speaker notes", "layouts", "charts")),
    "spreadsheet": ("spreadsheets", ("sheets", "workbooks", "tables of numbers"), ("formulas", "pivots", "lookups")),
    "meeting-notes": ("meeting notes", ("minutes", "call notes"), ("action items", "decisions", "owners")),
    "calendar": ("calendars", ("schedules", "meeting times", "events"), ("time zones", "availability", "invites")),
    "translation": ("translations", ("localized text", "language versions"), ("glossaries", "locales", "plurals")),
    "image": ("images", ("photos", "pictures", "screenshots"), ("resolution", "alt text", "compression")),
    "video": ("videos", ("clips", "recordings", "footage"), ("captions", "thumbnails", "encoding")),
    "patient-record": (
        "patient records",
        ("medical charts", "health records", "EHR entries"),
        ("HIPAA", "consent", "allergies"),
    ),
    "lab-result": ("lab results", ("test results", "bloodwork"), ("reference ranges", "flags", "trends")),
    "lesson-plan": (
        "lesson plans",
        ("class plans", "curricula", "syllabi"),
        ("objectives", "activities", "assessments"),
    ),
    "grade": ("student grades", ("marks", "scores", "report cards"), ("rubrics", "weights", "feedback")),
    "listing": ("property listings", ("real estate ads", "home listings"), ("photos", "pricing", "open houses")),
    "lease": ("leases", ("rental agreements", "tenancy contracts"), ("rent", "deposits", "renewals")),
    "recipe": ("recipes", ("dishes", "menus"), ("ingredients", "portions", "allergens")),
    "itinerary": ("travel itineraries", ("trip plans", "travel schedules"), ("flights", "hotels", "visas")),
    "tax-return": ("tax returns", ("tax filings", "taxes"), ("deductions", "forms", "deadlines")),
    "claim": ("insurance claims", ("claims", "damage reports"), ("policies", "adjusters", "payouts")),
    "campaign": ("marketing campaigns", ("promotions", "ad campaigns"), ("audiences", "budgets", "ROI")),
    "press-release": ("press releases", ("media announcements", "news releases"), ("quotes", "embargo", "boilerplate")),
    "privacy-policy": ("privacy policies", ("privacy notices", "data policies"), ("GDPR", "cookies", "consent")),
    "incident": ("incidents", ("outages", "production issues"), ("timelines", "root causes", "postmortems")),
    "roadmap": ("product roadmaps", ("plans for the product", "release plans"), ("priorities", "milestones", "themes")),
    "user-story": (
        "user stories",
        ("tickets for the backlog", "requirements"),
        ("acceptance criteria", "story points", "personas"),
    ),
    "release-note": ("release notes", ("changelogs", "what's new posts"), ("versions", "fixes", "features")),
    "code-review": ("code reviews", ("pull request reviews", "PR feedback"), ("comments", "style", "bugs")),
    "open-source-license": (
        "open source licenses",
        ("license terms", "OSS licenses"),
        ("attribution", "copyleft", "compatibility"),
    ),
    "customer-email": (
        "customer emails",
        ("replies to customers", "support emails"),
        ("tone", "templates", "apologies"),
    ),
    "forecast": (
        "sales forecasts",
        ("revenue projections", "pipeline forecasts"),
        ("quotas", "seasonality", "win rates"),
    ),
    "churn": ("churn reports", ("cancellations", "lost customers"), ("cohorts", "reasons", "win-back")),
    "cohort": ("cohort analyses", ("retention curves", "user cohorts"), ("activation", "retention", "signup month")),
    "ab-test": ("A/B tests", ("split tests", "experiments"), ("sample size", "significance", "variants")),
    "keyword": ("SEO keywords", ("search terms", "search rankings"), ("volume", "difficulty", "intent")),
    "ad-copy": ("ad copy", ("ad headlines", "ad text"), ("hooks", "calls to action", "variants")),
    "vendor": (
        "vendor assessments",
        ("supplier reviews", "third-party risk"),
        ("questionnaires", "scores", "due diligence"),
    ),
    "access-review": (
        "access reviews",
        ("permission audits", "user entitlements"),
        ("least privilege", "roles", "stale accounts"),
    ),
    "vulnerability": ("vulnerability scans", ("security holes", "CVE findings"), ("severity", "patches", "exploits")),
    "kubernetes-manifest": (
        "Kubernetes manifests",
        ("k8s YAML", "deployments", "helm values"),
        ("pods", "probes", "resource limits"),
    ),
    "terraform-module": ("Terraform modules", ("infrastructure code", "IaC"), ("state", "providers", "drift")),
    "cost-report": ("cloud cost reports", ("cloud bills", "spend on AWS"), ("tags", "rightsizing", "savings")),
    "data-pipeline": ("data pipelines", ("ETL jobs", "data flows"), ("schedules", "backfills", "lineage")),
    "ml-model": (
        "machine learning models",
        ("ML models", "classifiers", "predictors"),
        ("features", "drift", "accuracy"),
    ),
    "prompt": (
        "LLM prompts",
        ("prompt templates", "system prompts"),
        ("few-shot examples", "evaluations", "guardrails"),
    ),
    "chatbot": ("chatbots", ("support bots", "virtual assistants"), ("intents", "handoff", "fallbacks")),
    "accessibility": (
        "accessibility issues",
        ("a11y problems", "WCAG gaps"),
        ("contrast", "screen readers", "keyboard navigation"),
    ),
}
# action: (verb as written, noun for names, synonyms a person might type)
ACTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "audit": ("Audit", "audit", ("check", "review", "inspect")),
    "summarize": ("Summarize", "summary", ("sum up", "give me the gist of", "condense")),
    "draft": ("Draft", "drafting", ("write", "compose", "create a first version of")),
    "translate": ("Translate", "translation", ("localize", "convert to another language")),
    "migrate": ("Migrate", "migration", ("move", "port", "switch over")),
    "reconcile": ("Reconcile", "reconciliation", ("match up", "balance", "cross-check")),
    "forecast": ("Forecast", "forecasting", ("predict", "project", "estimate")),
    "optimize": ("Optimize", "optimization", ("speed up", "improve", "make cheaper")),
    "validate": ("Validate", "validation", ("verify", "sanity-check", "lint")),
    "schedule": ("Schedule", "scheduling", ("plan", "book", "set times for")),
    "classify": ("Classify", "classification", ("categorize", "sort", "tag")),
    "deduplicate": ("Deduplicate", "dedup", ("remove duplicates from", "merge duplicate")),
    "anonymize": ("Anonymize", "anonymizer", ("redact", "mask personal data in", "scrub PII from")),
    "visualize": ("Visualize", "charts", ("plot", "graph", "chart")),
    "archive": ("Archive", "archiver", ("store away", "clean out old", "retire")),
    "monitor": ("Monitor", "monitoring", ("watch", "keep an eye on", "track")),
    "troubleshoot": ("Troubleshoot", "troubleshooting", ("debug", "diagnose", "fix problems with")),
    "benchmark": ("Benchmark", "benchmarking", ("compare", "measure against peers", "rank")),
    "prioritize": ("Prioritize", "prioritization", ("rank", "triage", "decide what comes first in")),
    "approve": ("Approve", "approvals", ("sign off on", "authorize", "get approval for")),
    "import": ("Import", "importer", ("load", "bring in", "upload")),
    "export": ("Export", "exporter", ("download", "extract", "pull out")),
    "template": ("Build templates for", "templates", ("standardize", "reuse a format for")),
    "automate": ("Automate", "automation", ("script", "stop doing by hand", "put on autopilot")),
    "score": ("Score", "scoring", ("rate", "grade", "rank by quality")),
    "redesign": ("Redesign", "redesign", ("rework", "overhaul", "restructure")),
    "onboard": ("Onboard people to", "onboarding", ("train people on", "get new people started with")),
    "document": ("Document", "docs", ("write up", "explain", "make a guide for")),
    "secure": ("Secure", "hardening", ("lock down", "harden", "protect")),
    "estimate": ("Estimate costs of", "estimator", ("price out", "cost out", "quote")),
    "search": ("Search", "finder", ("find", "look up", "locate")),
    "compare": ("Compare", "comparison", ("diff", "contrast", "weigh")),
    "clean": ("Clean up", "cleanup", ("tidy", "fix formatting of", "normalize")),
    "generate": ("Generate", "generator", ("produce", "make", "spin up")),
    "review-compliance": ("Check compliance of", "compliance", ("check compliance for", "check regulations for")),
}
PLATFORMS = (
    "NetSuite", "QuickBooks", "Xero", "SAP", "Workday", "BambooHR", "Greenhouse", "Salesforce", "HubSpot",
    "Zendesk", "Intercom", "Freshdesk", "Jira", "Linear", "Asana", "Trello", "Notion", "Confluence", "Airtable",
    "Google Sheets", "Excel", "Slack", "Microsoft Teams", "Zoom", "GitHub", "GitLab", "Bitbucket", "Jenkins",
    "CircleCI", "AWS", "Azure", "GCP", "Kubernetes", "Terraform", "Datadog", "Grafana", "PagerDuty", "Sentry",
    "Snowflake", "BigQuery", "Postgres", "MySQL", "MongoDB", "Shopify", "Stripe", "Mailchimp", "WordPress",
    "Figma", "Canva", "YouTube", "Epic", "Canvas LMS", "Zillow", "DocuSign", "Okta",
)  # fmt: skip
AUDIENCES = ("finance teams", "support agents", "recruiters", "engineers", "marketers", "clinicians", "teachers",
             "founders", "analysts", "operations staff", "sales reps", "legal teams")  # fmt: skip
QUALIFIERS = ("", "", " for small teams", " at scale", " for regulated industries", " every week", " in bulk")
DESCRIPTION_FORMS = (
    "{Verb} {objects} in {platform}{qualifier}: {r1}, {r2} and {r3}. Use when the user asks to {syn} {objects}.",
    "Helps {audience} {verb} {objects} with {platform}, covering {r1} and {r2}. Triggers: '{osyn}', '{r3}'.",
    "{Verb} {objects} from {platform}{qualifier}. Handles {r1}, {r2}, {r3}. Use when working with {osyn}.",
    "A {platform} workflow to {verb} {objects}{qualifier} ({r1}, {r2}). Use when {audience} mention {osyn}.",
)
QUERY_FORMS = (
    "{act} {thing}{on}",
    "{act} our {thing}{on}",
    "how do I {act} {thing}{on}",
    "{thing} {noun}{on}",
    "need to {act} {thing}{on}",
    "{act} {thing} ({r})",
)


@dataclass(frozen=True, slots=True)
class GeneratedSkill:
    """One generated skill: its folder path under the catalog root, name, description and task."""

    path: str
    name: str
    description: str
    action: str
    object: str
    platform: str


def catalog(count: int, *, seed: int = 14, distinct_tasks: bool = False) -> list[GeneratedSkill]:
    """`count` skills with distinct names; with `distinct_tasks`, no two share an (action, object) pair."""
    rng = random.Random(seed)
    actions, objects = sorted(ACTIONS), sorted(OBJECTS)
    pairs = len(actions) * len(objects)
    space = pairs if distinct_tasks else pairs * len(PLATFORMS)
    if count > space:
        raise ValueError(f"at most {space:,} distinct skills can be generated this way, not {count:,}")
    out = []
    for n, code in enumerate(rng.sample(range(space), count)):
        pair, platform_at = code % pairs, code // pairs
        action, obj = actions[pair % len(actions)], objects[pair // len(actions)]
        platform = PLATFORMS[platform_at if not distinct_tasks else rng.randrange(len(PLATFORMS))]
        verb, noun, synonyms = ACTIONS[action]
        plural, object_synonyms, related = OBJECTS[obj]
        r1, r2, r3 = rng.sample(related, 3)
        description = rng.choice(DESCRIPTION_FORMS).format(
            Verb=verb,
            verb=verb[0].lower() + verb[1:],
            objects=plural,
            platform=platform,
            qualifier=rng.choice(QUALIFIERS),
            r1=r1,
            r2=r2,
            r3=r3,
            syn=rng.choice(synonyms),
            osyn=rng.choice(object_synonyms),
            audience=rng.choice(AUDIENCES),
        )
        slug = platform.lower().replace(" ", "-")
        name = f"{slug}-{obj}-{noun}" if not distinct_tasks else f"{obj}-{noun}"
        team = ("finance", "engineering", "people", "growth", "operations", "support")[n % 6]
        out.append(GeneratedSkill(f"{team}/{name}", name, description, action, obj, platform))
    return out


def write(root: Path, skills: list[GeneratedSkill]) -> None:
    """One SKILL.md per skill under `root` (name, description, a metadata tag for the platform)."""
    for skill in skills:
        folder = root / skill.path
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {skill.name}\ndescription: {json.dumps(skill.description)}\nmetadata:\n"
            f"  platform: {skill.platform}\n---\n\n# {skill.name}\n\nFollow the steps.\n",
            encoding="utf-8",
        )


def queries(
    skills: list[GeneratedSkill], count: int, *, seed: int = 41, platform: float = 0.4
) -> list[tuple[str, int]]:
    """`count` queries for distinct skills, each with the index of the skill it asks for.

    A query names the object with one of the words its skill's description uses for it (as a person naming the
    thing does) and the action by its own verb half the time, otherwise by a synonym the description may lack.
    `platform`: the share of queries that name the skill's platform (where tasks repeat across platforms, only
    that gives one answer).
    """
    rng = random.Random(seed)
    out = []
    for index in rng.sample(range(len(skills)), min(count, len(skills))):
        skill = skills[index]
        verb, noun, synonyms = ACTIONS[skill.action]
        plural, object_synonyms, related = OBJECTS[skill.object]
        described = skill.description.lower()
        things = [word for word in (plural, *object_synonyms, *related) if word.lower() in described]
        thing = rng.choice(things)
        on = f" in {skill.platform}" if rng.random() < platform else ""
        text = rng.choice(QUERY_FORMS).format(
            act=verb.lower() if rng.random() < 0.5 else rng.choice(synonyms),
            thing=thing,
            noun=noun,
            on=on,
            r=rng.choice([word for word in related if word != thing]),
        )
        out.append((text, index))
    return out
