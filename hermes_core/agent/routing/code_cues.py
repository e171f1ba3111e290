"""Signs that a request is about code: a fence, a URL, a shell command, code pasted bare, a
request to write, fix or explain code, and the technical things those name.

Shared by the rules' features (``has_code``, ``asks_for_code``, ``requires_shell_execution``) and
the reasoning cue (a why about a person that names one of these is troubleshooting, not chat), so
both read one vocabulary. Each pattern is linear in the text it is given.
"""

from __future__ import annotations

import re

from hermes_core.agent.routing.joke_cues import without_joke_topics
from hermes_core.agent.routing.library_cues import names_a_library_call
from hermes_core.agent.routing.shell_cues import (
    ASCII_END,
    ASCII_START,
    BARE_SHELL_WORDS,
    SHELL,
    SHELL_WINDOW,
    ShellContext,
)
from hermes_core.agent.routing.shell_cues import names_a_shell as names_a_shell
from hermes_core.agent.routing.status_cues import CJK_STATUS, STATUS_AFTER_PART, STATUS_NUMBER

CODE_BLOCK = re.compile(r"```|~~~")
URL = re.compile(r"\bhttps?://[^\s<>\"']+", re.IGNORECASE)
# An ASCII word's edges where CJK text may touch it (\\b sees none between 行 and m)
_ASCII_START, _ASCII_END = ASCII_START, ASCII_END


# Code pasted without fences: a traceback, a diff, a SQL statement, a JSON object, a definition.
# A line start's indent is ``[^\S\n]*`` (spaces and tabs), never ``\s*``: that spans newlines and
# made n blank lines cost n² steps (100,000 took 28 s).
# Each shape is one a person's prose does not take (SQL keywords in capitals, a JSON key quoted
# before its colon, a definition at the start of a line), so talking about code is not code.
PASTED_CODE = re.compile(
    r"Traceback \(most recent call last\)|^[^\S\n]*File \"[^\"\n]+\", line \d+"
    r"|^[^\S\n]+at [\w$.<>]+\([^)\n]*:\d+(?::\d+)?\)"                        # Java / JavaScript frames
    r"|^diff --git |^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@|^--- \S[^\n]*\n\+\+\+ \S"
    r"|\b(?:SELECT\s+(?:DISTINCT\s+)?[\w*.\"`]+(?:\s*,\s*[\w*.\"`()]+)*\s+FROM|INSERT\s+INTO"
    r"|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX|VIEW))\s"
    r"|[{\[]\s*\"[^\"\n]{1,80}\"\s*:\s*(?:\"|-?\d|\[|\{|true\b|false\b|null\b)"
    # a definition's header ends as code does (``:``, ``-> T:``, ``{``, or the line), so
    # "function f(x) = x^2" and "function f(x) is continuous" are maths
    r"|^[^\S\n]*(?:async\s+def|def|function|func|fn)\s+\w+\s*\([^)\n]*\)"
    r"(?:\s*(?:->[^\n:]*)?:|[^\n=]*\{|[^\S\n]*$)"
    r"|^[^\S\n]*(?:#include\s*[<\"]|from\s+[\w.]+\s+import\s+\w|import\s+[\w.]+;?\s*$)"
    r"|^[^\S\n]*(?:public|private|protected)\s+(?:static\s+)?(?:class|void|int|[A-Z]\w*)\s",
    re.MULTILINE)

_NAMED_LANGS = (r"python|javascript|typescript|java|golang|c\+\+|c#|php|kotlin"
                r"|haskell|scala|sql|bash|powershell|html|css|lua|perl|matlab"
                r"|js|node\.?js|vba|erlang|clojure|fortran|cobol|ocaml|zsh")
# names that are also words count only where a language goes ("in Go" ending a phrase,
# "a Go function", "Go code", 用Go写); Go and R only capitalised ("go to the store")
_LANGS = _NAMED_LANGS + r"|rust|ruby|swift|dart|julia|(?-i:Go|GO|R|TS)"
# C is also a musical key ("a song in C", "a scale in C"): only after a verb of programming
_C_LANG = r"(?-i:C)(?!\+\+|#)"
# A code verb near a code noun. Only nouns that name code alone ("code", "regex", "a Python
# script") count after any verb; "function", "method", "script", "program", "algorithm", "test"
# also name a liver's function, a wedding script, a concert program, a school test: those count
# after a making verb when a purpose clause follows ("a script to rename files", "a function that
# returns") or when they point at something pasted ("this function"), and after refactor/debug.
# "explain" and "review" take only the nouns that name code alone.
_EN_MAKE_VERB = r"write|writing|implement|fix|rewrite|port|generate|optimi[sz]e"
_EN_TALK_VERB = r"review|explain"
_EN_CODE_ONLY_VERB = r"refactor|debug"
_EN_CODE_VERB = rf"{_EN_MAKE_VERB}|{_EN_TALK_VERB}|{_EN_CODE_ONLY_VERB}"
_EN_WEAK_NOUN = r"functions?|methods?|scripts?|programs?|algorithms?|quer(?:y|ies)|tests?|class(?:es)?"
# Files and settings that are code and nothing else: a Dockerfile, a cron expression, a
# workflow, a query or schema in SQL, a shell script or one-liner
_EN_ARTIFACT = (r"dockerfiles?|makefiles?|docker[\s-]compose\s+(?:files?|ya?ml)|crontabs?"
                r"|cron\s+(?:jobs?|expressions?|schedules?)|github\s+actions?\s+(?:workflows?|jobs?)"
                r"|gitlab\s+ci|(?:nginx|webpack|eslint|babel)\s+config(?:uration)?s?"
                r"|(?:kubernetes|k8s)\s+(?:manifests?|ya?ml)|helm\s+charts?|terraform"
                r"|sql\s+(?:quer(?:y|ies)|statements?|schemas?|migrations?|triggers?)"
                r"|stored\s+procedures?|shell\s+(?:scripts?|commands?|one-?liners?)"
                r"|(?:awk|sed|grep|jq|curl|ffmpeg|git|kubectl|linux|unix)\s+(?:commands?|one-?liners?)"
                r"|one-?liners?\s+(?:in|using|with)\s+(?:bash|shell|zsh|powershell|python|perl|awk|sed)")
# a framework's parts and a web API, code when made ("create a React component", "write a REST
# API"); "the REST API to make requests" says how a service is used
_EN_WEB_CODE = (r"(?:react|vue|angular|svelte)\s+(?:components?|hooks?)|(?:rest|crud|graphql)\s+apis?"
                r"|graphql\s+(?:schemas?|resolvers?)|(?:flask|django|fastapi|spring\s+boot|rails"
                r"|laravel)\s+(?:apps?|applications?|routes?|endpoints?|views?|models?|servers?|apis?)")
# what one builds in a web framework, named by its kind alone
_WEB_SERVICE = r"(?:apis?|backends?|back-ends?|servers?|web\s*apps?|microservices?|endpoints?)\b"
# A code one scans, types in, redeems or dresses by is no program ("generate a QR code", "a
# discount code", "the dress code", "my zip code"): "code" headed by a kind of token. Read after
# "code" matched (each look is fixed-width), so a place with no "code" pays nothing.
_TOKEN_CODE_KINDS = ("qr", "bar", "promo", "promotional", "discount", "coupon", "voucher", "gift",
                     "referral", "verification", "confirmation", "activation", "access", "zip",
                     "postal", "post", "area", "country", "dress", "morse", "color", "colour",
                     "tracking", "booking", "invite", "invitation", "security", "pin", "otp",
                     "genetic",   # and life's code
                     # a code kept secret or typed at a door, and the law's
                     "secret", "cheat", "door", "alarm", "lock", "safe", "gate", "entry", "wifi",
                     "locker", "combination", "phone", "dialling", "dialing", "airport",
                     "currency", "tax", "penal", "civil", "criminal", "building", "fire",
                     # one lives by, a novel's, a gift card's
                     "honor", "honour", "ethics", "moral", "pirate", "conduct", "vinci", "card")
_NOT_A_TOKEN_CODE = "".join(rf"(?<!\b{kind}\scode)" for kind in _TOKEN_CODE_KINDS)
# what a language names beside it ("a bash one-liner", "a Kotlin data class", "a TS type");
# "a Java developer" and "Python snakes" are no code
_EN_LANG_THING = (_EN_WEAK_NOUN + r"|one-?liners?|commands?|snippets?|statements?|types?"
                  r"|interfaces?|structs?|enums?|data\s+class(?:es)?|decorators?|generators?"
                  r"|loops?|lambdas?|closures?|iterators?|macros?|traits?|modules?|packages?")
# a code of conduct, a code word and a code name are no program
_EN_CODE_NOUN = (r"code(?!\s+(?:of|words?|names?)\b)" + _NOT_A_TOKEN_CODE
                 + r"|regex(?:es)?|regular expressions?|unit tests?|snippets?|sql"
                 r"|endpoints?|parsers?|lexers?|compilers?|codebase|" + _EN_ARTIFACT + "|" + _EN_WEB_CODE +
                 r"|(?:recursive|iterative|async|asynchronous|lambda|callback|helper)\s+"
                 r"(?:functions?|methods?)"
                 r"|(?:this|these|the following|the above)\s+(?:" + _EN_WEAK_NOUN + r")"
                 r"|my\s+(?:functions?|methods?|scripts?|quer(?:y|ies)|algorithms?)"
                 r"|(?:" + _LANGS + "|" + _C_LANG + r")\s+(?:" + _EN_LANG_THING + r")"
                 r"|classes? (?:in|for) (?:" + _LANGS + r")")
# Chinese (simplified and traditional) and Japanese put the verb and the thing in either order.
# 函数 is also school maths (函数f(x)=x²), 算法题 a puzzle, 接口人 a contact person, a video's
# 脚本 its script: those are not code. 解释 takes only the nouns that name code alone.
_ZH_CODE_VERB = (r"写|寫|编写|編寫|实现|實現|修复|修復|修改|调试|調試|重构|重構|优化|優化|生成"
                 r"|改")
_ZH_TALK_VERB = r"解释|解釋"
# a secret code or a door's (秘密代码, 门禁代码) is kept, not run
_ZH_CODE_ONLY_NOUN = r"(?<!秘密|门禁|門禁)(?:代码|代碼)|程式碼|正则|正則|单元测试|單元測試|bug|SQL|sql"
_ZH_CODE_NOUN = (_ZH_CODE_ONLY_NOUN
                 + r"|(?:函数|函數)(?!\s*[a-zA-Z]\s*[(=（])|(?:算法|演算法)(?![题題])|接口(?!人)"
                 r"|(?:脚本|腳本)(?<!(?:视频|視頻|直播|电影|電影|广告|廣告|带货|帶貨)..)"
                 r"(?<!(?:视频|視頻|直播|电影|電影|广告|廣告|带货|帶貨)的..)")
_ZH_NOT_PROSE = (r"(?![^。！？?!\n]{0,8}?(?:文章|报告|報告|通知|方案|模板|文档|文檔|培训|培訓|流程"
                 r"|措辞|措辭|求职|求職|总结|總結|课程|課程|论文|論文|诗|詩|故事|小说|小說|作文|科普))"
                 # a joke, a lesson plan, lecture notes or a rhyme about it, in the same clause
                 # ("写一个快排，再讲个笑话" asks for the sort, then a joke)
                 r"(?![^。！？?!\n，,；;]{0,8}?(?:段子|笑话|笑話|教案|讲义|講義|课件|課件|口诀|口訣|讲稿|講稿"
                 r"|演讲|演講|简介|簡介|歌词|歌詞|顺口溜|順口溜))")
# a code one scans, redeems or dresses by (QRコード, クーポンコード, ドレスコード), as in English
_JA_CODE = "コード" + "".join(f"(?<!{kind}コード)" for kind in (
    "qr", "バー", "ドレス", "クーポン", "プロモ", "プロモーション", "割引", "招待", "認証", "確認",
    "アクセス", "モールス", "カラー", "郵便", "追跡", "予約", "セキュリティ", "pin", "ギフト", "紹介",
    "アクティベーション", "ワンタイム"))
_JA_CODE_NOUN = _JA_CODE + r"|関数|スクリプト|正規表現|単体テスト|ユニットテスト|テストコード"
_JA_WEAK_NOUN = r"プログラム|テスト"      # also a festival's programme, a school test
_JA_CODE_VERB = r"書|実装|修正|デバッグ|作成|作っ|作る|リファクタ"
# An algorithm or structure made (二分探索を書いて, LRUキャッシュを実装して), not written about
# (an article, a poem); a stack or queue only implemented (トラックがスタックした is stuck)
_JA_ALGORITHM_NAME = (r"(?:二分探索木?|二分木|(?:クイック|マージ|バブル|挿入|選択|ヒープ)ソート|連結リスト"
                      r"|リンクリスト|ハッシュ(?:テーブル|マップ)|LRUキャッシュ|ダイクストラ法?|深さ優先探索"
                      r"|幅優先探索|優先度付きキュー|トライ木)")
_JA_ABOUT = r"説明|記事|レポート|解説|紹介|詩|物語|作文|感想|歌|ブログ|について"
_JA_ALGORITHM = (rf"(?=[二クマバ挿選ヒ連リハLlダ深幅優ト]){_JA_ALGORITHM_NAME}"
                 rf"(?:(?!{_JA_ABOUT})[^。！？?!\n]){{0,12}}?"
                 r"(?:実装|書い|書く|書け)|(?:スタック|(?<!ベ)キュー)を?実装"
                 # the verb first, as typed in a hurry ("実装してLRUキャッシュ")
                 rf"|(?=[実書])(?:実装し|書い)て(?:ください|下さい)?[、,\s]{{0,2}}"
                 rf"(?:{_JA_ALGORITHM_NAME}|スタック|キュー)(?![^。！？?!\n]{{0,12}}?(?:{_JA_ABOUT}))")
_JA_CODE_ONLY_NOUN = _JA_CODE + r"|正規表現|単体テスト|ユニットテスト"   # 説明 takes only these
# Music the phrase is about ("the song in C", "rewrite this melody in C"): C is a key there.
_NOT_A_KEY = (r"(?![^.?!\n]{0,60}?\b(?i:songs?|melod(?:y|ies)|chords?|progressions?|tunes?|scales?"
              r"|music|riffs?|pieces?|arrangements?|chorus(?:es)?|verses?|lyrics|solos?|harmon(?:y|ies)"
              r"|hymns?|ballads?|sonatas?|symphon(?:y|ies)|concertos?)\b)")
# Algorithms and data structures by name: code when one is made ("implement binary search",
# "write a quicksort", "a quicksort implementation", "binary search in Python", 实现二分查找,
# 链表反转怎么写), a concept when asked about ("what is binary search?", 快速排序是谁发明的). "A
# quick sort of the receipts" is English, 快排队 is queueing, 二分法 is school maths and
# economics, 节流 saving money: none is here.
_EN_ALGORITHM = (
    r"binary\s+search(?:\s+trees?)?|bsts?|quick-?sorts?|quick\s+sort(?!\s+(?:of|through|out)\b)"
    r"|(?:merge|bubble|insertion|selection|heap|radix|counting|bucket|topological)[\s-]?sorts?"
    r"|(?:lru|lfu)\s+caches?|(?:doubly\s+|singly\s+)?linked\s+lists?|hash\s?(?:maps?|tables?)"
    r"|(?:binary|red-black|avl|segment|fenwick|suffix|b)[\s-]trees?|trie"
    # a priority queue at the ER or a priority queue system is a plan (as a queue system is)
    r"|(?:min|max)[\s-]?heaps?|priority\s+queues?(?!\s+(?:system|policy|process|rules?"
    r"|management|at\s+(?:the|our|my|a|an)|for\s+(?:patients|customers|visitors|guests))\b)"
    r"|dijkstra(?:'s)?(?:\s+algorithm)?|bfs|dfs"
    r"|(?:breadth|depth)[\s-]first\s+search|union[\s-]find|disjoint[\s-]sets?|kmp|fizz\s?buzz"
    r"|fibonacci(?:\s+(?:sequence|numbers?|function))?|sieve\s+of\s+eratosthenes|n[\s-]queens"
    r"|knapsack|levenshtein(?:\s+distance)?|edit\s+distance|debounce|singleton(?:\s+pattern)?"
    r"|rate\s+limiter|bloom\s+filter|(?:ring|circular)\s+buffer"
    # a judge's classic problems by name ("two sum" alone is also a first-grade sum: it counts
    # only where an algorithm does, made, done in a language or beside a judge's name)
    r"|(?:two|three|four)[\s-]?sum|valid\s+parenthes[ei]s|towers?\s+of\s+hanoi"
    r"|longest\s+(?:common|increasing|palindromic)\s+sub(?:sequence|string)s?")
# what may stand between "write a" and the algorithm ("a recursive binary search", "a Python
# quicksort"); a poem or a story about one is prose ("write a fibonacci poem")
_EN_ALGORITHM_ADJ = (r"simple|basic|quick|fast|efficient|recursive|iterative|generic|thread-safe"
                     r"|concurrent|custom|minimal|working|clean|small|short|full|complete|in-place"
                     r"|stable|lock-free|bottom-up|top-down|" + _LANGS)
_EN_NOT_PROSE = (r"(?![\s-]+(?:poems?|stor(?:y|ies)|songs?|essays?|jokes?|articles?|blog|spirals?"
                 r"|art|quilts?|tattoos?)\b|\s+of\s+(?:my|our|your|his|her|their)\b)")
_ZH_ALGORITHM = (
    r"二分查找|二分搜索|二分搜尋|折半查找|快速排序|快排(?![队隊])|冒泡排序|归并排序|歸併排序|堆排序"
    r"|插入排序|选择排序|選擇排序|希尔排序|希爾排序|基数排序|基數排序|计数排序|計數排序|桶排序"
    r"|拓扑排序|拓撲排序|(?:反转|反轉|翻转|翻轉)(?:单|單)?(?:链表|鏈表|二叉树|二叉樹)"
    r"|(?:单|單|双向|雙向)?(?:链表|鏈表)(?:反转|反轉|翻转|翻轉)?|二叉(?:搜索|查找)?[树樹]|二元樹"
    r"|红黑树|紅黑樹|哈希表|雜湊表|散列表|字典[树樹]|前[缀綴][树樹]|[并並]查集|最小堆|最大堆"
    r"|优先队列|優先佇列|LRU|LFU|单例模式|單例模式|深度优先搜索|深度優先搜尋|广度优先搜索"
    r"|廣度優先搜尋|DFS|BFS|迪杰斯特拉|Dijkstra|KMP|斐波那契|防抖函数|防抖函數|节流函数|節流函數"
    # and a web crawler, named by what it does (爬虫类 are reptiles)
    r"|爬虫(?![类類])|爬蟲(?![类類])")
# Where a language's name ends: a word edge, or its last letter a + or # (C++, C#: \b finds no
# edge after them, and "Write a stack in C++" was read as no language)
_NAME_END = r"(?:\b|(?<=[+#]))"
# Where a language ends its phrase, or goes on as a programmer's does ("in Python using pandas")
_LANG_ENDS = (r"(?=\s*(?:$|[?.!,;:)]|(?:using|with|without|and|or|for|to|so|that|when|if|code"
              r"|\d)\b))")
# A thing done to data, said first in a sentence, in a language ending the phrase ("Reverse a
# linked list in Java", "Sort a dict by value in Python"); a job, a course or a class in one is
# a career ("find a job in Java", "get certified in SQL")
_EN_TASK_VERB = (r"reverse|sort|parse|read|write|convert|merge|split|remove|delete|find|check"
                 r"|count|print|generate|create|make|build|code|program|compute|calculate|dedupe"
                 r"|deduplicate|flatten|validate|download|upload|connect|send|fetch|scrape"
                 r"|serialize|deserialize|load|save|iterate|loop|filter|group|join|concatenate"
                 r"|format|list|append|insert|draw|plot|render|detect|extract|replace|match"
                 r"|compare|encrypt|decrypt|hash|encode|decode|compress|shuffle|swap|transpose"
                 r"|sum|add|get|open|call|implement|declare|define|initiali[sz]e|capitali[sz]e"
                 r"|train|fit|classify|cluster|predict|tokeni[sz]e|visuali[sz]e")
_NOT_A_CAREER = (r"(?![^.?!\n]{0,60}?\b(?:jobs?|work|careers?|courses?|classes|class(?!es)"
                 r"|certified|certificates?|degrees?|tutors?|teachers?|bootcamps?|internships?"
                 r"|interviews?)\b)")
# Java is also an island: a stay or a trip there is travel ("Find a hostel in Java", "Check the
# flights in Java"); looked for only where the phrase ends in Java, each look bounded
_NOT_A_TRIP = (r"(?!(?=[^.?!\n]{0,60}?\bin\s+java\b)[^.?!\n]{0,60}?\b(?:hostels?|hotels?|flights?"
               r"|beach(?:es)?|villas?|resorts?|restaurants?|cafes?|tours?|trips?|holidays?"
               r"|vacations?|visas?|volcano(?:e?s)?|temples?|homestays?|airports?|trains?"
               r"|ferr(?:y|ies)|hikes?|hiking|surfing|photos?|pictures?|souvenirs?)\b)")
# A code thing with what it is for, no verb needed ("regex for US phone numbers", "Dockerfile
# for a Flask app", "java program to check palindrome"); one for beginners is a course
_EN_NAMED_THING = (r"regex(?:es)?|regular\s+expressions?|unit\s+tests?|" + _EN_ARTIFACT
                   + r"|(?:" + _LANGS + "|" + _C_LANG + r")\s+(?:functions?|methods?|scripts?"
                   r"|programs?|quer(?:y|ies)|one-?liners?|commands?|snippets?|statements?)"
                   # a framework's part ("django model for a blog"; Rails and Spring are words)
                   r"|(?:flask|django|fastapi|laravel)\s+(?:apps?|applications?|routes?|endpoints?"
                   r"|views?|models?|serializers?|forms?)")
_FOR_WHAT = (r"\s+(?:to\s+(?!(?:learn|study|know|master|read)\b)\w|that\b|which\b"
             r"|for\s+(?!(?:beginners|dummies|kids|newbies|novices|students|experts|everyone"
             r"|interviews?)\b)\w)")
# Everyday verbs done to code pointed at ("make this function faster", "speed up this query",
# "clean up this code", "add comments to this code"); "my query letter" is a letter
_EN_POINTED_CODE = (r"(?:this|these|the\s+following|the\s+above|my|our)\s+(?:code|codebase"
                    r"|functions?|methods?|snippets?|loops?|quer(?:y|ies)(?!\s+letters?)"
                    r"|regex(?:es)?|sql|(?:" + _LANGS + r")\s+(?:" + _EN_LANG_THING + r"|code))")
_EN_EVERYDAY_VERB = (r"make|speed\s+up|clean\s+up|tidy\s+up|simplify|improve|shorten|vectori[sz]e"
                     r"|paralleli[sz]e|memoi[sz]e|document|comment|annotate|rename|complete"
                     r"|finish|extend|test|profile|benchmark|convert|translate"
                     r"|add\s+[\w-]+(?:\s+[\w-]+)?\s+to")
# A language code goes into, the phrase ending there ("convert this function to TypeScript");
# 50 F to C is a temperature, a letter into French no code
_INTO_LANGS = _NAMED_LANGS + r"|rust|swift|dart|(?-i:Go|TS)"
# The letters the Chinese branches of a request for code start with (their verbs, algorithms
# and turns into a language); hand-kept, a test compares them with the branches' own
ZH_ASK_OPENS = ("写寫编編实實修调調重优優生改手来來给給要需转轉换換翻二折快冒归歸堆插选選希基计計"
                "桶拓反单單双雙链鏈红紅哈雜散字前并並最深广廣爬LlDdBbKk迪斐防节節")
_ZH_LANG_NOUN = (r"(?:" + _LANGS + "|" + _C_LANG + r")\s*(?:函数|函數|脚本|腳本|程序(?![员員])"
                 r"|程式(?!設計|员|員)|代码|代碼|方法|类|類|查询|查詢|语句|語句|命令|指令|正则|正則)")
# Operations done to a data structure: with one named they are code ("reverse linked list")
_EN_DS_OP_VERB = (r"reverse|invert|traverse|balance|flatten|rotate|serialize|deserialize|sort"
                  r"|search|merge|insert\s+into|delete\s+from|detect\s+(?:a\s+)?cycles?\s+in")
# Judges whose problems are solved in code (a problem number or an algorithm beside one)
_JUDGES = r"(?:leetcode|leet\s+code|hackerrank|codewars|codeforces|atcoder)"
# What a language names beside it when one is made (besides _EN_LANG_THING's code words): a
# program's kinds. Not a game (a Go game is the board game) nor a book or a course.
_EN_BUILT_THING = (_EN_LANG_THING + r"|servers?|clients?|apps?|applications?|bots?|scrapers?"
                   r"|crawlers?|clis?|command[\s-]line\s+(?:tools?|apps?)|tools?|librar(?:y|ies)"
                   r"|apis?|endpoints?|services?|web\s*sites?|backends?|programs?|handlers?"
                   r"|middlewares?|routers?|controllers?|workers?|daemons?|plugins?|extensions?"
                   r"|wrappers?|sdks?|drivers?|microservices?|validators?")
_NOT_A_COURSE = (r"(?!\s+(?:for|to)\s+(?:(?:my|our|the|your)\s+)?(?:beginners|dummies|kids|children"
                 r"|newbies|novices|students|adults|seniors|teens|pupils|learners|class|team"
                 r"|teach|learn|study)\b|\s+(?:course|lessons?|teachers?|tutors?|syllabus)\b)")
# The thing made ends its noun phrase: "a Python tool shed", "a Ruby app review" are no code
_THING_ENDS = (r"(?=\s*(?:$|[?.!,;:)]|(?:for|to|that|which|with|in|using|called|named|from|and|or"
               r"|so|on|of|like|where|when|who)\b))")
# The most-used libraries across Python, JavaScript, Go, Rust and Java, read where a language
# is ("read a CSV file with pandas", "Scrape a page with BeautifulSoup"). Kept small: each is a
# name typed for code and, but for pandas, no other word (Selenium is a mineral, Playwright a
# person, Express, Spring, React, Requests words: left out); a framework's part named (a Flask
# app, a React component) is in _EN_WEB_CODE.
_LIBRARIES = (r"pandas|numpy|matplotlib|seaborn|scikit-learn|sklearn|pytorch|tensorflow|keras"
              r"|beautiful\s?soup|bs4|sqlalchemy|fastapi|django|jquery|lodash|axios|express\.?js"
              r"|next\.?js|tokio|serde|boto3|opencv")
# pandas the animal: a picture, a zoo or bamboo in the phrase ending "with pandas"
_NOT_THE_ANIMAL = (r"(?!(?=[^.?!\n]{0,60}?\bwith\s+pandas\b)[^.?!\n]{0,60}?\b(?:pictures?"
                   r"|photos?|drawings?|cartoons?|panda|zoos?|bamboo|toys?|plush\w*|bears?|cubs?"
                   r"|stor(?:y|ies)|poems?|songs?|kids|children|animals?)\b)")
# "names starting with Python", "words ending with Java": the word a list's items start or end
# with, not a language the list is made in (read at "with": fixed-width looks behind it)
_NOT_A_START = "".join(rf"(?<!\b{verb}\s)" for verb in (
    "start", "starts", "starting", "started", "begin", "begins", "beginning", "began", "end",
    "ends", "ending", "ended"))
# A sentence's start, or a please
_SAID_FIRST = (r"(?:(?<![^.!?\n])|(?<=[.!?\n][^\S\n])|(?<=[.!?\n][^\S\n]{2})|(?<=\bplease\s)"
               r"|(?<=\bpls\s))")
# The data a task is done to ("sort a dict by value python")
_EN_DATA = (r"dict(?:ionar(?:y|ies))?s?|lists?|arrays?|strings?|tuples?|sets?|hash\s?maps?|maps?"
            r"|objects?|json|csv|dataframes?|files?|keys?|values?|integers?|ints?|floats?"
            r"|characters?|chars?|columns?|rows?|timestamps?|bytes|matri(?:x|ces)|vectors?|slices?"
            r"|structs?|enums?|elements?")
# The words between a verb and a code noun, none of them a piece of prose the code is the topic
# of ("write a blog post about Python decorators", "an essay on SQL"): each place looks ahead
# one word, so the gap costs at most 40 steps of a bounded look.
_NO_PROSE_GAP = (r"(?:(?!\b(?:about|essays?|articles?|posts?|poems?|stor(?:y|ies)|blogs?|tweets?"
                 r"|speech(?:es)?|lectures?|books?|chapters?|thesis|papers?)\b)[^.?!\n]){0,40}?")
# Requests for code said in everyday words, in English (each branch starts an ASCII word; read
# apart, see _EN_ASKS_FOLDED) and in Chinese (behind one look at their first letters, so most
# places fail in one step: every branch tried at every place cost 3x)
_EN_ASKS = (
    # an algorithm made, not asked about (see _EN_ALGORITHM)
    rf"\b(?:implement(?:s|ed|ing)?|code|coding)\b[^.?!\n]{{0,40}}?\b(?:{_EN_ALGORITHM})\b"
    rf"|\b(?:write|writing|create|build|give\s+me|show\s+me|make\s+me)\s+(?:(?:me|us)\s+)?"
    rf"(?:(?:an?|the|some|one|my\s+own|your\s+own)\s+)?(?:(?:{_EN_ALGORITHM_ADJ})\s+){{0,2}}"
    rf"(?:{_EN_ALGORITHM})\b{_EN_NOT_PROSE}"
    rf"|\b(?:{_EN_MAKE_VERB}|create|build)\b[^.?!\n]{{0,40}}?\b(?:functions?|methods?|programs?"
    rf"|scripts?|classes?|code|implementations?)\s+(?:for|of)\s+(?:(?:an?|the)\s+)?"
    rf"(?:{_EN_ALGORITHM})\b"
    rf"|\bimplementations?\s+of\s+(?:(?:an?|the)\s+)?(?:{_EN_ALGORITHM})\b"
    rf"|\bhow\s+(?:to|do\s+(?:i|you|we)|can\s+(?:i|you|we)|should\s+(?:i|we))\s+(?:implement|write"
    rf"|code|reverse|build|create|traverse|balance|invert|sort|search|merge|flatten)\b"
    rf"[^.?!\n]{{0,30}}?\b(?:{_EN_ALGORITHM})\b"
    # a stack or a queue only when implemented (a queue system at the bakery is a plan)
    rf"|\bimplement(?:s|ed|ing)?\s+(?:(?:an?|the|my\s+own|your\s+own)\s+)?"
    rf"(?:(?:{_EN_ALGORITHM_ADJ})\s+){{0,2}}(?:stacks?|queues?|deques?)"
    r"(?:\b(?!-)(?!\s+(?:system|policy|process|rules?|management)\b)"
    # a stack-based machine or calculator is one; a stack-based filing system is a plan
    r"|-based\s+(?:[\w-]+\s+)?(?:vms?|virtual\s+machines?|interpreters?|calculators?|evaluators?"
    rf"|parsers?|compilers?|allocators?|languages?|{_EN_BUILT_THING})\b)"
    # an algorithm, then its implementation, a language ending the phrase a few words on ("two
    # sum leetcode python"; "the linked list in Java is slow" goes on past the name) or a
    # judge's name: one branch, so the long list of names is tried once at each place
    rf"|\b(?:{_EN_ALGORITHM})(?:\s+implementations?\b|\s+(?:in|using|with)\s+(?:{_LANGS}|{_C_LANG}){_NAME_END}"
    rf"{_LANG_ENDS}|\b[^.?!\n]{{0,24}}?\b(?:{_LANGS}|{_C_LANG}){_NAME_END}(?!\s*'s){_LANG_ENDS}"
    rf"|\s+{_JUDGES}\b)"
    rf"|{_ASCII_START}(?:{_LANGS})\s+(?:{_EN_ALGORITHM})\b"
    # a data structure worked on ("reverse linked list", "invert a binary tree"): the structure
    # names the code, where "reverse the list of guests" and "search the house" name none
    rf"|\b(?:{_EN_DS_OP_VERB})\s+(?:(?:an?|the|two|my|this|given)\s+)?"
    rf"(?:(?:sorted|singly|doubly|unsorted|balanced)\s+)?(?:{_EN_ALGORITHM})\b{_EN_NOT_PROSE}"
    # a judge's problem named ("LeetCode 1 two sum"); "Is LeetCode 75 enough?" is a study plan.
    # The blanks after the number are one run (two \s* around an optional dot split n blanks n²
    # ways: 10,000 took 8 s)
    rf"|\b{_JUDGES}\s*(?:problem\s*|question\s*)?(?:#?\d+(?:\s*[.:-])?\s*)?(?:{_EN_ALGORITHM})\b"
    # made with a language: a stack, a queue or any algorithm written in one ending the phrase
    # ("Write a stack in C": a song or a story in C is in a key and names no structure), or a
    # thing the language makes ("Make a Python class for a bank account", "Write a Go HTTP
    # server", "Build a Rust CLI"; a class for beginners is a course, a tool shed a shed)
    rf"|\b(?:write|writing|code|coding|create|build|make|implement(?:s|ed|ing)?|design|define"
    rf"|give\s+me|show\s+me)\s+(?:(?:me|us)\s+)?(?:(?:an?|the|some|one|my|our|my\s+own|your\s+own)\s+)?"
    rf"(?:(?:{_EN_ALGORITHM_ADJ}|new)\s+){{0,2}}(?:(?:stacks?|queues?|deques?|{_EN_ALGORITHM})\s+"
    rf"(?:in|using)\s+(?:{_LANGS}|{_C_LANG}){_NAME_END}(?!\s*'s){_LANG_ENDS}"
    rf"|(?:{_LANGS}|{_C_LANG})\s+(?:[\w.-]+\s+)?(?:{_EN_BUILT_THING})\b{_NOT_A_COURSE}{_THING_ENDS})"
    # a task said first, done in a language ending the phrase, or done to data with the
    # language last and no "in" ("sort a dict by value python"; "Find my python" names no data)
    # (one branch, so the sentence start is looked at once at each place)
    rf"|{_SAID_FIRST}(?:(?:{_EN_TASK_VERB})\b"
    + _NOT_A_CAREER + _NOT_A_TRIP + _NOT_THE_ANIMAL +
    rf"(?:[^.?!\n]{{0,60}}?\b(?:in|using|{_NOT_A_START}with(?!\s+(?:julia|ruby|(?-i:R))\b))\s+"
    rf"(?!(?-i:SWIFT)\b)(?:{_LANGS}|{_LIBRARIES}){_NAME_END}(?!\s*'s){_LANG_ENDS}"
    rf"|[^.?!\n]{{0,40}}?\b(?:{_EN_DATA})\b[^.?!\n]{{0,40}}?\s(?<!\bwith\s)(?<!\bletter\s)"
    rf"(?:{_INTO_LANGS}){_NAME_END}"
    r"(?=\s*(?:$|[?.!\n])))"
    # or the language first ("python sort a dict by value")
    rf"|(?:{_NAMED_LANGS})\s+(?:{_EN_TASK_VERB})\s+[^.?!\n]{{0,40}}?\b(?:{_EN_DATA})\b)"
    # a code thing and what it is for; code pointed at and worked on; code put into a language
    rf"|\b(?:{_EN_NAMED_THING}){_FOR_WHAT}"
    rf"|\b(?:{_EN_EVERYDAY_VERB})\s+(?:{_EN_POINTED_CODE})\b"
    rf"|\b(?:create|build|make|set\s+up)\b{_NO_PROSE_GAP}\b(?:{_EN_ARTIFACT}|{_EN_WEB_CODE})\b"
    # a web service built in Flask or Express, which are no language nor in _LIBRARIES (a flask
    # holds tea, shipping is express): "Build a joke API in Flask" (review s55rF)
    rf"|\b(?:create|build|make|set\s+up|write|code)\b{_NO_PROSE_GAP}\b{_WEB_SERVICE}"
    rf"[^.?!\n]{{0,30}}?\b(?:in|using|with)\s+(?:flask|express(?:\.?js)?){_LANG_ENDS}"
    rf"|\b(?:convert(?:s|ed|ing)?|translat(?:e|es|ed|ing)|transpil(?:e|es|ed|ing)|rewrite|turn)\b"
    rf"[^.?!\n]{{0,60}}?\b(?:to|into)\s+(?:{_INTO_LANGS})\b(?!\s*'s){_LANG_ENDS}")
# Chinese: an algorithm made or asked how to write; a language's function, script or query
# given; code turned into a language
_ZH_ASKS = (
    rf"(?:{_ZH_CODE_VERB}|手写|手寫|来一个|來一個|来个|來個|给我|給我)[^。！？?!\n]{{0,12}}?"
    rf"(?:{_ZH_ALGORITHM}){_ZH_NOT_PROSE}"
    rf"|(?:{_ZH_ALGORITHM})[^。！？?!\n]{{0,6}}?(?:怎么写|怎麼寫|如何写|如何寫|怎么实现|怎麼實現"
    r"|如何实现|如何實現|代码|代碼|程式碼)"
    rf"|(?:给我|給我|来|來|要|需要|写|寫)(?:一个|一個|个|個|一段|段|一条|一條|条|條|一行|行)"
    rf"[^。！？?!\n]{{0,10}}?(?:{_ZH_LANG_NOUN}|{_ZH_CODE_ONLY_NOUN}|{_EN_ARTIFACT})"
    rf"{_ZH_NOT_PROSE}"
    rf"|(?:转成|轉成|转换成|轉換成|转为|轉為|改写成|改寫成|翻译成|翻譯成|改成|换成|換成)\s*"
    rf"(?:{_NAMED_LANGS})")
_ASKS_FOR_CODE = re.compile(
    rf"\b(?:{_EN_CODE_VERB})\b{_NO_PROSE_GAP}\b(?:{_EN_CODE_NOUN})\b"
    rf"|(?=[{ZH_ASK_OPENS}])(?:{_ZH_ASKS})"
    rf"|\b(?:{_EN_MAKE_VERB})\b[^.?!\n]{{0,40}}?\b(?:{_EN_WEAK_NOUN})\s+(?:that|which|to\s+\w)"
    rf"|\b(?:{_EN_CODE_ONLY_VERB})\b[^.?!\n]{{0,40}}?\b(?:{_EN_WEAK_NOUN})\b"
    r"|\b(?:fix|debug)\b[^.?!\n]{0,40}?\bbugs?\b"
    rf"|\b(?:how\s+(?:do|can|should|would)\s+(?:i|you|we)|how\s+to|{_EN_CODE_VERB})\b"
    + _NOT_A_TRIP +
    rf"[^.?!\n]{{0,60}}?"
    # the language ends the phrase: "with ruby stones", "with java beans", "R&D" and the bank
    # network SWIFT are not code; "with Julia", "with Ruby" are people, "starting with R" a letter
    rf"\b(?:in|using|{_NOT_A_START}with(?!\s+(?:julia|ruby|(?-i:R))\b))\s+(?!(?-i:SWIFT)\b)(?:{_LANGS}|{_LIBRARIES})"
    rf"{_NAME_END}(?!\s*'s)(?=\s*(?:$|[?.!,;:)]|(?:using|with|without|and|or|for|to|so|that|when|if|code|\d)\b))"
    rf"|\b(?:implement|implementing|port|rewrite|compile|optimi[sz]e|program)\b"
    # "rewrite this melody in C": a key
    + _NOT_A_KEY +
    rf"[^.?!\n]{{0,60}}?"
    rf"\b(?:in|using)\s+{_C_LANG}(?=\s*(?:$|[?.!,;:)]))"
    # "Go code", "this Rust code": the language and code name code together; a bank's SWIFT
    # code ("the Swift code for HSBC") is Swift code only pointed at ("this Swift code")
    rf"|\b(?:(?:this|my|our|your|these)\s+swift|(?!swift\b)(?:{_LANGS})|{_C_LANG})\s+code\b"
    r"(?!\s+of\b)"
    # ... unless what is written is prose about code: an article, a notice, a plan, a template
    rf"|(?:{_ZH_CODE_VERB})[^。！？?!\n]{{0,20}}?(?:{_ZH_CODE_NOUN}){_ZH_NOT_PROSE}"
    rf"|(?:{_ZH_TALK_VERB})[^。！？?!\n]{{0,20}}?(?:{_ZH_CODE_ONLY_NOUN})"
    rf"|(?:{_ZH_CODE_NOUN})[^。！？?!\n]{{0,8}}?(?:报错|報錯|出错|出錯|怎么改|怎麼改|有问题|有問題"
    r"|改成|改为|改為|重构|重構|优化|優化|修复|修復|转成|轉成|翻译成|翻譯成)"
    # each \s* follows a word it needs: three in a row around optional words split a run of n
    # spaces n² ways at every start ("用python" and 1,000 spaces took 5 s)
    rf"|(?:用|使用|在)\s*(?:{_LANGS}|{_C_LANG})\s*(?:(?:语言|語言)\s*)?(?:(?:里|裡|中)\s*)?"
    r"(?:(?:来|來)\s*)?(?:写|寫|实现|實現|怎么|怎麼|如何|查询|查詢|统计|統計|计算|計算|求|找出|获取"
    r"|獲取|读取|讀取|解析|生成|处理|處理|批量|爬|抓取|去重|排序|遍历|遍歷|判断|判斷|反转|反轉"
    r"|合并|合併|删除|刪除|打印|输出|輸出|画|畫|绘制|繪製|做|开发|開發|编写|編寫|编程|編程|连接|連接"
    r"|下载|下載|转换|轉換|模拟|模擬|创建|創建)"
    # python怎么反转列表 without the 用, as "How do I reverse a list in Python?"; only the names
    # that are no other word, and not an opinion or a course (Python怎么样, java怎么学)
    rf"|{_ASCII_START}(?:{_NAMED_LANGS})\s*(?:(?:语言|語言)\s*)?(?:(?:里|裡|中)\s*)?"
    r"(?:怎么|怎麼|如何|实现|實現|写一个|寫一個|写个|寫個|编写|編寫)"
    r"(?!样|樣|学|學|入门|入門|选|選)"
    rf"|(?:{_JA_CODE_NOUN})[^。！？?!\n]{{0,12}}?(?:{_JA_CODE_VERB})"
    rf"|(?:{_JA_WEAK_NOUN})[^。！？?!\n]{{0,12}}?(?:書|実装|修正|デバッグ|リファクタ)"
    rf"|(?:{_JA_CODE_ONLY_NOUN})[^。！？?!\n]{{0,12}}?(?:説明|解説)|{_JA_ALGORITHM}"
    # Pythonで書いて, Pythonでリストを逆順にする方法 (用Python写 / 怎么); "Rで始まる名前" is a letter
    # (a look at an ASCII word's start first: tried at every place, the names cost half the scan)
    rf"|(?=[a-z]){_ASCII_START}(?:{_LANGS}|{_C_LANG})(?:\s*言語)?\s*で(?!始|終)[^。！？?!\n]{{0,20}}?"
    r"(?:書|実装|どう(?:やって|すれば)|方法|には)",
    re.IGNORECASE)

# 解释这个函数 points at something pasted: code, unless the message is school maths (a formula
# f(x)=..., y=..., x², or a word of the maths class). A code identifier (parse_csv, getUser,
# load()) settles it as code either way.
_ZH_EXPLAIN_POINTED = re.compile(
    r"(?:解释|解釋|讲解|講解|说明|說明)[^。！？?!\n]{0,6}?"
    r"(?:这个|這個|这段|這段|该|該|以下|下面的?|我的|此)\s*(?:函数|函數|方法)"
    # この関数を説明して: the thing first (関数電卓 is a calculator)
    r"|(?:この|その|次の|以下の|下記の|私の)\s*(?:関数|メソッド)(?!電卓)[^。！？?!\n]{0,12}?"
    r"(?:説明|解説)")
CODE_IDENTIFIER = re.compile(
    rf"{_ASCII_START}(?:[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9_]*"
    r"|[A-Za-z_][A-Za-z0-9_]+\s*\(\s*\))")
_SCHOOL_MATHS = re.compile(
    r"\b[a-zA-Z]\s*[(（]\s*[a-zA-Z]\s*[)）]\s*=|\b[a-zA-Z]\s*=|[²³√]|\^"
    r"|几何意义|幾何意義|单调|單調|定义域|定義域|值域|图像|圖像|极值|極值|最值|奇偶|周期|导数|導數"
    r"|零点|零點|对称轴|對稱軸"
    r"|グラフ|微分|積分|導関数|定義域|値域|単調|極値|最大値|最小値|接線|漸近線|二次関数|一次関数")


# The English requests in everyday words, read case-sensitively on the lower-cased text (with
# IGNORECASE every word start compared each alternative letter by letter, folding: 3x slower),
# or with IGNORECASE on the text itself when lower-casing changes its length. The names read
# cased (Go, R, C, TS, SWIFT) keep their case in the lower-cased text.
_EN_ASKS_GROUP = rf"(?=[a-zGRTCS]){_ASCII_START}(?:{_EN_ASKS})"
_EN_ASKS_FOLDED = re.compile(_EN_ASKS_GROUP)
_EN_ASKS_UNFOLDED = re.compile(_EN_ASKS_GROUP, re.IGNORECASE)
_CASED_NAMES = re.compile(rf"(?=[GRTCS]){_ASCII_START}(?:Go|GO|R|TS|C(?![+#])|SWIFT){_ASCII_END}")


def _folded_keeping_cased_names(text: str) -> str | None:
    """``text`` lower-cased but for the names read cased, or None when lower-casing changes its
    length (the places in it would not be the text's)."""
    folded = text.lower()
    if len(folded) != len(text):
        return None
    parts, at = [], 0
    for m in _CASED_NAMES.finditer(text):
        parts += [folded[at:m.start()], m.group()]
        at = m.end()
    return "".join(parts) + folded[at:] if parts else folded


def asks_for_code(text: str) -> bool:
    text = without_joke_topics(text)   # a joke's topic is no request ("Write a SQL joke")
    if _ASKS_FOR_CODE.search(text):
        return True
    folded = _folded_keeping_cased_names(text)
    if (_EN_ASKS_FOLDED.search(folded) if folded is not None
            else _EN_ASKS_UNFOLDED.search(text)):
        return True
    if names_a_library_call(text):
        return True
    if not _ZH_EXPLAIN_POINTED.search(text):
        return False
    return bool(CODE_IDENTIFIER.search(text)) or not _SCHOOL_MATHS.search(text)


# Faults only a program has: what a crash, a build or a test run reports (a person "出错了",
# makes an error or "崩溃了" too, so those are not here). 报错 is also read after a code noun
# by ASKS_FOR_CODE.
_FAULT = (r"segfault(?:s|ed)?|segmentation\s+faults?|core\s+dump(?:s|ed)?|stack\s*traces?"
          r"|tracebacks?|null\s+pointers?|nullpointerexception|memory\s+leaks?|stack\s+overflows?"
          r"|(?:syntax|compile|compiler|compilation|build|runtime|linker)\s+errors?"
          r"|exit\s+(?:code|status)|error\s+codes?")
_CJK_FAULT = (r"报错|報錯|段错误|段錯誤|内存泄漏|內存洩漏|記憶體洩漏|空指针|空指針|编译错误|編譯錯誤"
              r"|编译失败|編譯失敗|エラー|セグフォ|メモリリーク|スタックトレース|コンパイル|ビルド")

# Words of a running system that a person's day does not use: memory calls, locks, a kernel's
# faults, a timeout (not a person's: "got a timeout", "put in timeout" are a game's or a
# child's, so a lone "a/in/on timeout" is left out; plural, compound or set to a value counts).
_SYSTEMS = (r"malloc|calloc|realloc|mutex(?:es)?|deadlock(?:s|ed)?|race\s+conditions?|syscalls?"
            r"|system\s+calls?|kernel\s+panics?|out\s+of\s+memory|oom(?:\s+killer)?|localhost"
            r"|timeouts|timed\s+out|etimedout|(?<!\ba\s)(?<!\bin\s)(?<!\bon\s)(?<!\binto\s)timeout"
            # a network's or a program's acronym, alone or glued to Chinese or Japanese
            # (他为什么RPC超时, TCP连不上); one a person's day shares (DB, IO, a VPN, a socket)
            # only before a timeout: KTV超时, PPT超时, DDL超时 are a room's, slides', a deadline's
            r"|g?rpc|tcp|udp|dns|ssh|https?"
            r"|(?:db|io|gc|cdn|vpn|redis|mysql|postgres|kafka|socket|sql|ldap|smtp|ftp|tls|ssl|mq)"
            r"\s*(?:请求|請求|连接|連接|调用|調用|读取|讀取)?(?:一直|总是|總是|老是|总|總|老|又|经常|經常"
            r"|频繁|頻繁|都|也|就|会|會|还|還)?(?:超时|超時|タイムアウト)")

# Words a person's day shares with a program's, read by context: an API (not Asian Pacific
# Islander students), a CPU's load (not one bought), a server that crashed, restarted or serves
# the web (not a waiter), a heap's overflow or dump (not laundry), a thread pool or the main
# thread (not a forum's or a needle's). In Chinese 服务器 and 线程 name only a computer's (a
# waiter is 服务员, a sewing thread 线, a forum's 帖子) and a timeout is a request's (请求超时, not
# 考试超时); in Japanese a timeout that happened (タイムアウトした, not a coach's タイムアウトを取った),
# a server (not a beer or water server), ヒープ, a thread pool or multithreading (a forum's
# スレッド is a thread too).
def _after(words: str) -> str:
    """Lookbehinds for each of ``words`` and one space: read at the noun, so a place that does
    not start the noun fails in one step (a prefix branch per word was tried at every word)."""
    return "(?:" + "|".join(rf"(?<={w}\s)" for w in words.split("|")) + ")"


_SHARED_IN_CONTEXT = (
    # each branch's first letter looked at first
    r"(?=[cdhmrst])(?:cpu(?=\s*(?:usage|load|utili[sz]ation|spikes?|time|cores?|bound|throttl|temp|at\s+\d"
    r"|\d+\s*%|占用|使用率|负载|負載|負荷|飙|飆|跑满|跑滿))"
    r"|(?=server)(?:"
    + _after("web|http|https|dev|api|sql|mail|smtp|game|file|proxy|dns|build|production|prod"
             "|staging|backend|database|db|app|application|linux|remote|ssh|ftp"
             "|restart|restarts|restarted|restarting|reboot|reboots|rebooted|rebooting")
    + r"servers?|servers?(?=\s+(?:errors?|crash|logs?|(?:is|was|went|goes|keeps\s+going)\s+down"
    # a waiter returns, responds or is tipped 100 dollars too: a status code or error after
    r"|down\b|(?:returns?|returned|respond(?:s|ed)?(?:\s+with)?)\s+(?:an?\s+)?(?:[1-5]\d\d\b"
    r"|errors?|empty|null|nothing|garbage|json|html)|response|side|config|restart|reboot"
    r"|timeouts?|timed|[45]\d\d\b(?!\s*(?:dollars?|bucks|euros?|pounds?|yen)))))"
    # restarted, rebooted, deployed to or ssh'd into a server named by a determiner
    r"|(?:restart(?:s|ed|ing)?|reboot(?:s|ed|ing)?|deploy(?:s|ed|ing)?\s+to|ssh(?:ed)?\s+into)"
    r"\s+(?:the|a|his|her|their|our|my)\s+servers?"
    r"|(?=heap)(?:heap\s+(?:overflows?|corruption|dumps?|size|space|memory|allocations?"
    r"|fragmentation|snapshots?|usage|exhaust(?:ed|ion)?)|" + _after("java|jvm|v8|node") + "heap)"
    # a sheet's thread count and the main thread of a story are no program's
    r"|(?=thread)(?:thread[\s-]*(?:pools?|safe(?:ty)?|dumps?|local|starvation|sanitizer|leaks?"
    r"|ids?)|" + _after("main|worker|background|ui|daemon|kernel|render") + "threads?"
    r"(?!\s+of\s+(?!(?:the\s+|an?\s+|this\s+|my\s+|his\s+|her\s+|their\s+)?(?:app|application"
    r"|program|process|browser|game|engine|server|service|renderer)\b)))"
    r"|multi-?thread(?:ed|ing)?|single-threaded)")
_CJK_SHARED = (
    r"(?:请求|請求|连接|連接|读取|讀取|响应|響應|网络|網絡|接口|服务|服務|数据库|數據庫|调用|調用)"
    r"(?:一直|总是|總是|老是|总|總|老|又|经常|經常|频繁|頻繁|都|也|就|会|會|还|還)?(?:超时|超時)|(?:超时|超時)(?:错误|錯誤|异常|異常|重试|重試)"
    r"|服务器|伺服器|线程|線程|執行緒|堆内存|堆內存|堆記憶體|堆溢出"
    # a coach's timeout taken, asked or applied for (タイムアウトを2回取った)
    # and one of a game: a strategy or technical timeout, during or out of one (中, 明け, 直後,
    # の間), one called or left, a coach, a bench or a player beside it
    # (a program's named timeout, 接続タイムアウト中, is a program's during it too)
    r"|(?<!作戦)(?<!テクニカル)(?<!試合の)タイムアウト(?:(?<=接続タイムアウト)|(?<=通信タイムアウト)"
    r"|(?<=応答タイムアウト)|(?<=読み取りタイムアウト)|(?<=読込タイムアウト)|(?<=読み込みタイムアウト)"
    r"|(?<=書き込みタイムアウト)|(?<=リクエストタイムアウト)|(?<=セッションタイムアウト)"
    r"|(?<=ネットワークタイムアウト)|(?<=ソケットタイムアウト)|(?<=アイドルタイムアウト)"
    r"|(?!中|明け|直後|の(?:間|あいだ)"
    r"|を[^。！？?!、\n]{0,6}?(?:取|と[っるり]|要求|申請|請求|使|コール|残)"
    r"|[^。！？?!\n]{0,8}?(?:ベンチ|監督|コーチ|選手|作戦|試合|審判|円陣)))"
    # not a beer, coffee, tea, juice or water server, nor a serval (サーバル) or servant
    r"|(?<!ビール)(?<!ビア)(?<!コーヒー)(?<!珈琲)(?<!お茶)(?<!茶)(?<!ジュース)(?<!ウォーター)"
    r"(?<!ウオーター)(?<!ドリンク)サーバ(?:ー(?!ント)|(?![ンルー]))"
    r"|スレッド(?:プール|セーフ|ダンプ|ローカル)|(?:マルチ|メイン|ワーカー|シングル)スレッド|ヒープ")

# An API in capitals or a programmer's lower case, read cased (on the text, not the folded
# text): "Apis" so spelled is the honeybees' genus, the Egyptian bull or a name; not an API
# heritage, API students (Asian Pacific Islander).
API_WORD = re.compile(
    rf"{_ASCII_START}(?:API[sS]?|apis?|Api(?!s)){_ASCII_END}"
    r"(?!\s+(?i:heritage|students?|communit(?:y|ies)|women|men|people|americans?|voters"
    r"|famil(?:y|ies)|history|month|clubs?|groups?)\b)")

# A part of a running system a real failure is explained by (a cache, a config, CI, the build, a
# deploy, a database, dependencies, a disk, a certificate, a port, DNS, a firewall; 缓存, 配置,
# 部署, 端口; キャッシュ, デプロイ, ポート): an answer naming one
# after a why explains it ("Why does the build fail? Because the cache is stale."), where a
# joke's answer is about its subject. Read only in an answer: "why did he clear the cache" and
# a build of muscle or of Lego are a person's.
SYSTEM_PART = re.compile(
    rf"{_ASCII_START}(?:(?i:cach(?:e|es|ed|ing)|config(?:s|uration|urations)?|deploy(?:s|ed|ing"
    r"|ments?)?|databases?|dependenc(?:y|ies)|environment\s+variables?"
    r"|(?:the|a|this|our|my|every|nightly|release)\s+builds?"
    rf"|builds?\s+(?:fail|break|broke|pass|error|step|cache|time)\w*"
    # a host's parts: its disk, a certificate, a port in use or numbered, DNS, a firewall
    r"|disks?|(?:ssl|tls)\s+certs?|certificates?|ports?\s+(?:\d+|(?:is|was)\s+(?:already\s+)?"
    rf"(?:in\s+use|taken|blocked|closed))|dns|firewalls?)|CI){_ASCII_END}"
    r"|缓存|緩存|配置|构建|構建|部署|依赖|依賴|数据库|數據庫|编译|編譯|服务器|伺服器"
    r"|磁盘|磁碟|端口|证书|證書|防火墙|防火牆"
    r"|キャッシュ|デプロイ|データベース|依存関係|コンフィグ|設定ファイル|ディスク|証明書|ポート"
    r"|ファイアウォール")

# The letters the CJK words above (and the Latin ones among them: bug, SQL) start with: most
# places fail this one-step look. Hand-kept; a test compares the look with none.
CJK_WORD_OPENS = ("bBsS代程正单單単函算演接脚腳関コスユテ报報段内內記空编編エセメビ"
                  "请請连連读讀响響网網服數数调調超伺线線執堆タサマメワシヒ"
                  "返页頁后後负負ペゲプバ状狀错錯")

# A technical thing named by a word: a code noun, a language no other word spells, a fault, a
# word shared with a person's day in a program's context. An ASCII word's edges are ASCII ones
# (用Python写), a CJK noun's may not touch an ASCII letter ("ladybug" holds no bug).
TECHNICAL_WORD = re.compile(
    # a look at the first letter first: most places in a text fail in one step
    rf"(?=[a-z]){_ASCII_START}(?:{_EN_CODE_NOUN}|{_NAMED_LANGS}|{_FAULT}|{_SYSTEMS}"
    rf"|{_SHARED_IN_CONTEXT}|{STATUS_AFTER_PART}){_ASCII_END}"
    rf"|(?=[45]){_ASCII_START}{STATUS_NUMBER}"
    # a CJK word may follow an ASCII letter (DBタイムアウト, Javaコンパイル); a Latin one among
    # them (bug, SQL) may not ("ladybug" holds no bug)
    rf"|(?=[{CJK_WORD_OPENS}])(?:(?![A-Za-z0-9_])|{_ASCII_START})"
    rf"(?:{_ZH_CODE_NOUN}|{_JA_CODE_NOUN}|{_CJK_FAULT}|{_CJK_SHARED}|{CJK_STATUS})",
    re.IGNORECASE)

# Go, R and C spelled as words other words share ("Go home", R&B, Plan C, vitamin C, a grade C),
# read cased and by context: the language and a thing written in it (Go code, an R script, a C
# compiler), a program written, ported or built in it (or ported, migrated to it) with the phrase
# ending there (not a song in C: a key), used, learnt or switched to, and in Chinese and
# Japanese with 语言/言語, 用Go写, Goで書く. "Go" and "R" capitalised only; C not before ++ or #
# (those are spelled out above).
_WORD_LANG = r"(?:Go|R|C)(?![A-Za-z0-9_+#&'])"
# Where a phrase naming the language ends, or goes on as a programmer's does ("in C instead of
# Rust", "in Go because of speed"): not "in C major", "in C minor" (keys).
_PHRASE_GOES_ON = r"(?=\s*(?:$|[?.!,;:)]|(?i:for|instead|over|and|or|because|rather|to)\b))"
_WRITTEN_IN = (r"(?i:write|writes|wrote|written|writing|rewrite|rewrites|rewrote|rewritten"
               r"|rewriting|implement(?:s|ed|ing)?|port(?:s|ed|ing)?|code[sd]?|coding"
               r"|program(?:s|med|ming)?|compile[sd]?|build(?:s|ing)?|built)")
LANGUAGE_IN_CONTEXT = re.compile(
    # a look at the first letter first (each branch's own, "t" for transpile too): most places
    # fail in one step
    r"(?=[GRCwWrRiIpPcCbBuUlLsSmMaAtT用使改])(?:"
    rf"{_ASCII_START}{_WORD_LANG}\s+(?i:code|programs?|functions?|scripts?|compilers?"
    r"|librar(?:y|ies)|packages?|modules?|binar(?:y|ies)|runtime|structs?|pointers?|source"
    r"|projects?|toolchain|services?|backend|bindings?|developers?|programmers?|files?)\b"
    rf"|\b{_WRITTEN_IN}\b"
    + _NOT_A_KEY +
    rf"[^.?!\n]{{0,60}}?\b(?i:in|using)\s+{_WORD_LANG}{_PHRASE_GOES_ON}"
    # ported or migrated to it, the phrase ending there (not a melody taken to C: a key)
    r"|\b(?i:port(?:s|ed|ing)?|migrat(?:e|es|ed|ing)|transpil(?:e|es|ed|ing))\b"
    + _NOT_A_KEY +
    rf"[^.?!\n]{{0,60}}?\b(?i:to|into)\s+{_WORD_LANG}{_PHRASE_GOES_ON}"
    r"|\b(?i:use[sd]?|using|learn(?:s|ed|t|ing)?|(?:switch(?:ed|es)?|mov(?:e|ed|es)"
    rf"|migrat(?:e|ed|es))\s+to)\s+{_WORD_LANG}{_PHRASE_GOES_ON}"
    # chosen over or for something ("chose Go over Rust"); alone it may be a quiz's answer
    r"|\b(?i:pick(?:s|ed|ing)?|chose|choose[sn]?|choosing|chosen|prefer(?:s|red|ring)?"
    rf"|select(?:s|ed|ing)?|adopt(?:s|ed|ing)?)\s+{_WORD_LANG}(?=\s+(?i:for|over|instead|rather)\b)"
    rf"|{_ASCII_START}{_WORD_LANG}\s*(?:语言|語言|言語|代码|代碼|程序|程式|コード|プログラム"
    r"|で(?:書|実装|作|開発|リライト))"
    rf"|(?:用|使用|改用)\s*{_WORD_LANG}\s*(?:写|寫|重写|重寫|实现|實現|开发|開發|编程|編程|编写|編寫))",
    re.MULTILINE)

# Every shape above that names code, a command or a technical thing somewhere in a text, as two
# patterns: the case-blind ones compiled case-sensitive and read on the lower-cased text (Python's
# IGNORECASE folds every letter at every place tried: 7x slower on a short line), the cased ones
# (a traceback, SELECT, camelCase) on the text itself. A request for code names one of
# TECHNICAL_WORD's nouns or languages, so it is not scanned again.
def _joined(patterns: tuple[re.Pattern[str], ...], flags: int) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), flags)


_FOLDED = _joined((URL, SHELL, TECHNICAL_WORD), 0)
_UNFOLDED = _joined((URL, SHELL, TECHNICAL_WORD), re.IGNORECASE)
# Go, R, C and an API are read cased in one pass
_LANGUAGE_OR_API = _joined((LANGUAGE_IN_CONTEXT, API_WORD), re.MULTILINE)
_CASED = (CODE_BLOCK, PASTED_CODE, CODE_IDENTIFIER,   # apart: joined they ran slower
          _LANGUAGE_OR_API)
# The same without the shapes a router has already looked for in the whole text (a fence, a
# URL, a shell command, pasted code): the words, identifiers and languages only.
_FOLDED_WORDS = re.compile(TECHNICAL_WORD.pattern, 0)
_CASED_WORDS = (CODE_IDENTIFIER, _LANGUAGE_OR_API)


# How far past a window's end a thing starting inside it is read (a line's end comes first).
EDGE_READ = 160


def technical_starts(text: str, folded: str, start: int = 0, end: int | None = None, *,
                     shapes: bool = True) -> list[int]:
    """Where in ``text[start:end]`` something technical is named (a fence, a URL, a shell
    command, pasted code, a code identifier, a technical word), sorted: one pass of each
    pattern, so a caller asking of many places in a long text pays linear time once. ``folded``
    is ``text.lower()`` (made once by the caller); line starts and word edges are the whole
    text's, and a thing starting before ``end`` is read past it to its line's end (at most
    ``EDGE_READ`` characters), so a window's end cuts no word into a technical one. Go, R and C
    are seen cased, by context (``LANGUAGE_IN_CONTEXT``). ``shapes=False``:
    the caller has searched the whole text for a fence, URL, shell command and pasted code and
    found none, so they are not looked for again (half the cost on a short line)."""
    stop = len(text) if end is None else min(end, len(text))
    # a thing starting before ``stop`` is read on to its line's end (at most EDGE_READ past
    # ``stop``): read only to ``stop``, "shellfish" cut after "shell" named a shell
    newline = text.find("\n", stop, stop + EDGE_READ)
    reach = newline if newline >= 0 else min(len(text), stop + EDGE_READ)
    cased = _CASED if shapes else _CASED_WORDS
    if len(folded) != len(text):   # a letter whose lower case is longer: read the text itself
        blind = (_UNFOLDED if shapes else TECHNICAL_WORD).finditer(text, start, reach)
    else:
        blind = (_FOLDED if shapes else _FOLDED_WORDS).finditer(folded, start, reach)
    found = {*(m.start() for m in blind),
             *(m.start() for p in cased for m in p.finditer(text, start, reach))}
    if len(folded) == len(text) and all(folded.find(word, start, reach) < 0
                                        for word in BARE_SHELL_WORDS):
        return sorted(spot for spot in found if spot < stop)   # most texts name none
    kept: list[int] = []
    around: ShellContext | None = None
    for spot in sorted(found):
        if spot >= stop:
            break
        end = _bare_shell_word_end(text, spot)
        if end is not None:
            # a bare shell word among a person's words is theirs, as names_a_shell reads it
            if around is None:
                around = ShellContext(text, folded, max(0, start - SHELL_WINDOW),
                                 min(len(text), reach + SHELL_WINDOW))
            if around.everyday(spot, end):
                continue
        kept.append(spot)
    return kept


def _bare_shell_word_end(text: str, spot: int) -> int | None:
    """Where a bare "shell", "terminal" or "bash" starting at ``spot`` ends, or None: none starts
    there, or a longer technical thing does (a shell script, a bash one-liner)."""
    if text[spot:spot + 1] not in "sStTbB":
        return None
    word = text[spot:spot + 8].lower()
    bare = next((w for w in BARE_SHELL_WORDS if word.startswith(w)), None)
    if bare is None:
        return None
    end = spot + len(bare)
    if end < len(text) and ((text[end].isascii() and text[end].isalnum()) or text[end] == "_"):
        return None
    longer = TECHNICAL_WORD.match(text, spot)
    return None if longer is not None and longer.end() > end else end
