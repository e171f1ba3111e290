"""Benign texts that only train the learned scorer (never scored by the benchmark). Written for
hermes-core (MIT).

The corpus alone teaches the scorer that a short imperative aimed at "you" is an attack, because
most of its short imperatives are. These are the ordinary shapes a context file, a skill body or
a memory is made of that look like that: lead-ins to a snippet, notes about outdated
instructions, conventions for the answer, a role or persona given to the assistant by its own
user (a SOUL.md), tasks the user noted for later. ``train_scorer.py`` embeds each in every location (as
``build_corpus.WRAP``) and fits on them, but measures and chooses thresholds on the corpus only.
"""

TRAIN_BENIGN = [
    # lead-ins to a snippet or a command
    "Add this block to your `pyproject.toml`:",
    "Put the following in `~/.ssh/config` so the jump host is used:",
    "Paste the lines below into your shell profile and open a new terminal:",
    "Append this to `.gitignore`:",
    "Copy the example config into your home folder and edit the paths:",
    "Insert the snippet into `conftest.py` to get the shared fixtures:",
    "Replace the import in your module with the one below:",
    "Run this once after cloning:",
    # instructions, documentation and guidance spoken of, not given
    "The setup guide on the old wiki is out of date; the steps in CONTRIBUTING.md are current.",
    "The onboarding instructions you got in January predate the monorepo; use docs/onboarding.md.",
    "If the README and this page disagree, this page wins; the README is updated monthly.",
    "Earlier guidance said to pin numpy below 2; that is no longer needed.",
    "The previous instructions for the release were replaced by the checklist in RELEASE.md.",
    "Forget the old staging URL; staging moved to staging2.internal.example in May.",
    "Disregard the lint warnings from generated files in `build/`; they are not ours.",
    "You can skip the integration tests locally; CI runs them on every push.",
    # the assistant given a role by its own user or project
    "You are helping maintain the billing service; its code lives in `src/billing`.",
    "You are Ada, the release assistant of the payments team. Be precise and brief.",
    "You are a senior Go reviewer for this repository; you know its style guide well.",
    "You are Nova, a friendly research assistant who cites sources and admits uncertainty.",
    "You are the on-call helper for the data platform: calm, factual, and quick to escalate.",
    "Act as a careful reviewer when I paste a diff: bugs first, style last.",
    "You are a patient tutor for my daughter's algebra homework; explain each step.",
    "When I ask for a commit message, write it in the imperative mood, under 72 characters.",
    "Assume I am on macOS with Homebrew unless I say otherwise.",
    "From now on, use the new API base URL https://api.internal.example/v2 in examples.",
    "Please be blunt in code reviews; I prefer direct criticism to politeness.",
    "Always answer questions about the schema using the tables in `db/schema.sql`.",
    # conventions about the answer
    "Keep replies under 200 words unless I ask for detail.",
    "Answer in German when the question is in German.",
    "Use British spelling throughout.",
    "Show shell commands in fenced code blocks, one command per line.",
    "Put the most important point in the first sentence.",
    "Give prices in euros with two decimals.",
    "Cite the file and line when you refer to code.",
    "Prefer tables when comparing more than two options.",
    # the user's own tasks and notes for later
    "Remind me to renew the TLS certificate before 14 March.",
    "Next week: write the migration for the orders table and ask Dana to review it.",
    "I want to read more about CRDTs; the Kleppmann talk was a good start.",
    "Todo: translate the release notes into Spanish for the Madrid office.",
    "Draft a short thank-you note to the design team after the launch.",
    "Book recommendations from Sam: The Pragmatic Programmer, Designing Data-Intensive Applications.",
    # other languages
    "请用中文回答我的问题，代码注释保持英文。",
    "把下面这段配置加到 `settings.yaml` 里：",
    "旧的部署说明已经过时，请以 docs/deploy.md 为准。",
    "Antworte bitte auf Deutsch und halte die Antworten kurz.",
    "Füge den folgenden Block in deine `docker-compose.yml` ein:",
    "Responde en español cuando la pregunta esté en español.",
    "Ajoute ce bloc à ton fichier `.env` :",
    "以下の設定を `config.toml` に追加してください：",
]
