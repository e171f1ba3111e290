"""Benign texts that only train the learned scorer (never scored by the benchmark). Written for
hermes-core (MIT).

The corpus alone teaches the scorer that a short imperative aimed at "you" is an attack, because
most of its short imperatives are. These are the ordinary shapes a context file, a skill body or
a memory is made of that look like that: lead-ins to a snippet, notes about outdated
instructions, conventions for the answer, a role or persona given to the assistant by its own
user (a SOUL.md), tasks the user noted for later. ``train_scorer.py`` embeds each in every location (as
``build_corpus.WRAP``) and fits on them, but measures and chooses thresholds on the corpus only;
``TRAIN_BENIGN_MEMORY``, entries an assistant keeps about its user, only in memory;
``TRAIN_BENIGN_PERSONA``, persona, role and tone lines, only in the instructions files.
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

# Memory entries, fitted on as MEMORY.md only: ordinary notes, preferences and project facts an
# assistant keeps about its user. Without them the memory rows the scorer learns from are mostly
# attacks (143 hostile dev texts to 35 benign), so "this is a memory" itself reads as hostile and
# an ordinary note starts over half-way to the data threshold (decisions 141 and 148).
TRAIN_BENIGN_MEMORY = [
    # preferences
    "User likes short answers with the command first and the explanation after.",
    "Prefers tabs over spaces in Makefiles only; spaces everywhere else.",
    "Uses fish as the login shell; bash snippets need a note when they differ.",
    "Drinks no coffee after 2 pm; suggested meeting slots should be mornings.",
    "Wants dates written as 2024-05-01, never 05/01/2024.",
    "Likes dark themes; the terminal font is JetBrains Mono at 13 pt.",
    "Reads papers on the train; PDF links are more useful than blog posts.",
    "Does not want emoji in commit messages.",
    "Important: the user is colour-blind (red/green), so diagrams should use blue and orange.",
    "Previously used Jenkins; moved all pipelines to GitHub Actions last autumn.",
    "Now works remotely from Lisbon; the time zone is WET, one hour behind Berlin.",
    "The user overrides the default formatter with ruff format in every new repository.",
    "Ignores the weekly dependency-bot PRs until Friday and merges them in one batch.",
    "Following the team rota, the user is on call every fourth week, starting Monday.",
    # people and places
    "Dana leads the platform team and reviews every database migration.",
    "Marco is the contact at the printing shop; he answers email faster than the phone.",
    "The user's sister Lena lives in Graz; her birthday is 9 October.",
    "Dentist appointment every six months at the clinic on Rua Augusta.",
    "The cat is called Miso and needs her thyroid pill with breakfast.",
    "Partner is vegetarian; restaurant suggestions should have good vegetable dishes.",
    # project facts
    "The billing service runs on Python 3.12 and Postgres 16.",
    "Staging is rebuilt every night at 02:00 UTC from the main branch.",
    "Feature flags live in `flags.yaml`; the old LaunchDarkly keys were removed in March.",
    "The mobile app's minimum iOS version is 16; Android's minimum SDK is 26.",
    "Release branches are named release/YYYY.MM and are cut on the first Monday of the month.",
    "The search index is rebuilt from the orders table; a full rebuild takes about 40 minutes.",
    "The API rate limit for partners is 600 requests per minute per key.",
    "Logs older than 30 days move to cold storage; restoring them takes a day.",
    "The design system is in the `ui-kit` repository; components are documented in Storybook.",
    "Above the fold on the landing page: the pricing table and the signup button, nothing else.",
    "The old admin panel was retired; its previous URL now redirects to the new dashboard.",
    "Backups of the wiki are taken on Sundays and kept for eight weeks.",
    "The team decided to ignore flaky test reports from the Windows runner until it is replaced.",
    "The new intern, Priya, starts on 3 June and will work on the export feature.",
    # things said in past sessions
    "Last session: fixed the timezone bug in the invoice PDF; the cause was a naive datetime.",
    "Discussed moving the cron jobs to a queue; decided to wait until after the audit.",
    "The user asked for a summary of the incident from 12 April; it was a full disk on db-2.",
    "Talked about learning Rust; the user is halfway through the ownership chapter.",
    "Helped write a cover letter for a staff engineer role at a logistics company.",
    "The user's laptop is a 2021 MacBook Pro with 32 GB of memory.",
    # Chinese
    "用户喜欢简短的回答，先给命令，再解释。",
    "用户住在杭州，工作日早上九点开始上班。",
    "计费服务使用 Python 3.12 和 Postgres 16。",
    "每周二下午三点开项目例会，会议纪要放在共享文档里。",
    "用户不吃辣，推荐餐厅时要注意。",
    "测试环境每天凌晨两点从主分支重新部署。",
    "用户的女儿今年上初二，数学作业常常需要帮忙讲解。",
    "上次会话：修复了发票导出中的时区问题。",
    "之前的部署脚本已经废弃，现在统一用 GitHub Actions。",
    "重要：用户对青霉素过敏。",
    "团队决定暂时忽略 Windows 构建机上的不稳定测试。",
    "产品经理是王芳，所有需求变更都要先和她确认。",
    "用户习惯用 Vim 写代码，快捷键相关的建议要按 Vim 来给。",
    "下个月要把日志系统迁移到新的集群，预计需要两周。",
    "用户每天晚上跑步五公里，周末会去爬山。",
    "以下是用户常用的服务器：跳板机 jump.example.cn，数据库 db-1 和 db-2。",
]

# Persona and role lines, fitted on as HERMES.md and SKILL.md (instructions) only: who the assistant is, its
# tone and style, as a user writes them in SOUL.md or a project in HERMES.md. The memory entries
# above take "this is a memory" off the attack side; without these, the balance tips the other way
# and an ordinary "You are ..." line in an instructions file drifts towards the threshold
# (decision 151).
TRAIN_BENIGN_PERSONA = [
    # who the assistant is
    "You are Juniper, an assistant for a small bakery: orders, suppliers and the weekly rota.",
    "You are Orin, a coding companion who pairs with me on Rust side projects.",
    "You are the household organiser for our family of four; you know our calendars and chores.",
    "You are a research aide for a historian working on nineteenth-century shipping records.",
    "You are Pip, a cheerful assistant that helps a primary-school teacher plan lessons.",
    "You are an assistant for the support team of a web-hosting company; be accurate about DNS.",
    "You are a thoughtful writing partner for my novel; keep track of characters and timelines.",
    "You are Atlas, the travel planner of this workspace: trains over flights where it is sensible.",
    "You are a personal finance helper; you explain, you do not give investment advice.",
    "You are the documentation assistant for this repository and know its docs/ folder well.",
    "You are a calm, practical assistant for a hospital's IT helpdesk.",
    "You are Kestrel, an assistant for a wildlife photographer: gear, locations and light.",
    "You are an experienced SQL mentor who helps analysts write clearer queries.",
    "You are a kind and patient language partner for someone learning Portuguese.",
    "You are the assistant of an open-source maintainer; you triage issues and draft replies.",
    "You are Sage, a general-purpose assistant for my home office.",
    # tone and style
    "Your tone is warm but not chatty; skip the pleasantries and get to the answer.",
    "Speak plainly, like a colleague at the next desk, not like a brochure.",
    "Be honest when you do not know something, and say what would settle the question.",
    "Use a friendly, encouraging voice with beginners and a terse one with experts.",
    "Write in short paragraphs; use bullet points only for steps or lists of options.",
    "Keep a light sense of humour, but never joke about errors that cost someone data.",
    "Explain jargon the first time you use it.",
    "When a question is ambiguous, ask one clarifying question before answering.",
    "Prefer concrete examples to abstract explanations.",
    "Sign off without a summary; the last line should be the answer itself.",
    # Chinese
    "你是小禾，一个帮我管理个人待办事项和日程的助手。",
    "你是这个仓库的代码审查助手，熟悉项目的编码规范。",
    "你是一位耐心的数学辅导老师，讲题时每一步都要讲清楚。",
    "你是公司内部知识库的问答助手，回答时注明出处。",
    "你是一个温和、可靠的生活助手，帮我安排购物清单和家务。",
    "你是我的写作伙伴，帮我润色公众号文章，保持口语化的风格。",
    "你是运维团队的值班助手，遇到不确定的情况先提醒我确认。",
    "你是一名资深的前端工程师，擅长 React 和 TypeScript。",
    "你是旅行规划助手，优先推荐高铁出行，并注意预算。",
    "语气要亲切自然，不要过于正式。",
    "回答要简洁明了，先给结论，再说理由。",
    "遇到不知道的问题就直接说不知道，不要编造。",
    "解释专业术语时请举一个生活中的例子。",
    "用中文回答，代码和命令保持英文原样。",
    "说话风格幽默一点，但涉及数据安全时要严肃。",
    "每次回答不超过三段。",
]
