"""A shell command or a place to type one, and a bare "shell", "terminal" or "bash" read by the
words around it (a beach's, an airport's, a party's, an illness's, or a computer's).

Split from ``code_cues.py`` (which joins SHELL into its technical shapes and reads a bare word's
neighbours with ``ShellContext``) to keep each module to one job and under ~800 lines. Each
pattern is linear in the text it is given.
"""

from __future__ import annotations

import re
from bisect import bisect_left

# An ASCII word's edges where CJK text may touch it (\\b sees none between 行 and m)
ASCII_START = r"(?<![A-Za-z0-9_])"
ASCII_END = r"(?![A-Za-z0-9_])"
_ZH_WHICH = "(?:这个|这些|那个|那些|该|以下|下面的?|我的|这段|一个)?"
_ZH_RUNNABLE = "(?:命令|指令|脚本|程序|单元测试|测试|代码|迁移)"
_TOOLS = "(?:pip|npm|pnpm|yarn|apt|apt-get|brew|docker|kubectl|git|make|cargo|uv)"
SHELL = re.compile(
    r"\b(?:run|execute|exec)\s+(?:this|the|that|a|an|my|these)?\s*"
    r"(?:command|commands|script|shell|program|tests?|binary|migration)s?\b"
    # ASCII edges: "bash脚本怎么写" names bash as "a bash script" does
    rf"|{ASCII_START}(?:shell|terminal|bash|zsh|powershell|command[- ]line|cmd\.exe){ASCII_END}"
    r"|(?m:^[^\S\n]*\$[^\S\n]+\S)"
    r"|\bsudo\s+\S"
    # a tool and what it does; its edges are ASCII ones, since a CJK letter is a word character
    # too and "运行make test的时候" names a command as "run make test" does
    rf"|{ASCII_START}{_TOOLS}\s+"
    rf"(?:install|run|build|clone|push|pull|apply|exec|commit|test){ASCII_END}"
    # or given a flag: "make -j4", "npm -g", "git -C" ("make - well, bake -" is English)
    rf"|{ASCII_START}{_TOOLS}\s+--?[a-z]"
    # "up" only after compose: "make up a story" and "brew up some tea" are English
    rf"|{ASCII_START}(?:docker(?:-|\s+)compose|podman[- ]compose)\s+"
    rf"(?:up|down|build|run|exec|pull|logs){ASCII_END}"
    # Chinese, as the English: a place to type commands, or running names what is run (运行/执行
    # alone are also "operating" and "carrying out", 脚本 a film's script)
    # 终端 is also a shop's till, a phone or an end customer (销售终端, 移动终端, 终端消费者)
    r"|(?<!销售|移动|零售|智能|机场|客运|货运|码头|支付|收银|物流|渠道|门店|服务)终端"
    r"(?!消费者|客户|用户|市场|门店|网点|销售|零售|价格|设备|产品|渠道|需求)|命令行"
    rf"|(?:运行|执行|跑)(?:一下|一遍)?{_ZH_WHICH}{_ZH_RUNNABLE}"
    rf"|[把将]{_ZH_WHICH}{_ZH_RUNNABLE}[^。！？，,.!?\n]{{0,6}}?(?:运行|执行|跑)"
    # Japanese: the command line, or a thing that runs run (実行 alone also carries out a plan,
    # a school test is 実施, and a ターミナル is also an airport's)
    r"|コマンドライン"
    r"|(?:コマンド|スクリプト|テスト|プログラム|マイグレーション|ビルド)を?(?:実行|走らせ)",
    re.IGNORECASE)

# "shell", "terminal" and "bash" alone are also a beach's, a turtle's, an egg's, a petrol
# company's, a front company's, a war's, an airport's, an illness's and a party's. SHELL finds
# them; a match that is one of them alone is a command's only when the words around it (a
# bounded window) name none of a person's things, or name a computer's too ("my terminal at the
# airport cannot ssh").
BARE_SHELL_WORDS = frozenset({"shell", "terminal", "bash"})
SHELL_WINDOW = 60
_EVERYDAY_AROUND = re.compile(
    r"\b(?:beach(?:es)?|sea|seashore|shore|ocean|sand|oysters?|clams?|snails?|turtles?"
    r"|tortoises?|crabs?|hermit|conch|scallops?|mussels?|eggs?|easter|necklaces?|walnuts?"
    r"|coconuts?|peanuts?|nuts?|pies?|pastry|tacos?|pasta|gas|petrol|fuel|station|plc|shares"
    r"|stocks?|oil|artillery|mortar|airports?|flights?|planes?|gates?|boarding|check-?in|bus"
    r"|ferry|cruise|heathrow|luggage|baggage|illness|cancer|hospice|diagnos\w*|prognosis"
    r"|patients?|dying|party|parties|birthday|wedding|celebrat\w*|garlic|knife|hammer"
    # a party's plans and guests, a crowd's or a traveller's, a war's, a front company's
    r"|cancel\w*|guests?|invit\w*|friday|saturday|sunday|weekend|tonight|throw(?:s|ing|n)?"
    r"|threw|wear(?:ing)?|outfits?|dj|danc\w*|drinks?|cake|venue|anniversary|christmas"
    r"|graduation|retirement|farewell|reunion|housewarming|crowd(?:s|ed)?|busy|packed|queues?"
    r"|passengers?|travell?ers?|taxis?|parking|arrivals?|departures?|lounge|duty-free|army"
    r"|troops|soldiers?|war|bombard\w*|shock\w*|compan(?:y|ies)|offshore|launder\w*"
    # money or food shelled out, a degree or a station that is terminal
    r"|money|cash|rent|bucks|fortune|peas|pistachios|prawns?|shrimps?|grand\s+central)\b"
    # "bash" said of people ("Don't bash me", "Why do people bash vegans?"), a shy child's shell
    r"|\b(?:don't|dont|do\s+not|people|critics)\s+bash\b"
    r"|\bout\s+of\s+(?:my|his|her|their|your|its|our)\s+shell\b"
    r"|\bterminal\s+degrees?\b"
    # a party's or an airport's words in Chinese and Japanese ("周五的bash派对", "Terminal 2在机场")
    r"|派对|聚会|生日|婚礼|机场|航站楼|乘客|パーティー|空港|誕生日|結婚式"
    r"|\b(?:is|was|are|were|being)\s+terminal\b|\bterminal\s+[1-9a-e]\b"
    # an illness asked of someone ("Why is my grandmother terminal?")
    r"|\b(?:is|was)\s+(?:my|his|her|their|our|your|the)\s+\w+(?:'s)?\s+terminal\b",
    re.IGNORECASE)
_COMPUTER_AROUND = re.compile(
    r"\b(?:scripts?|commands?|prompt|linux|unix|ubuntu|macos|windows|wsl|ssh|zsh|sudo|cd|ls"
    r"|install\w*|errors?|output|files?|director(?:y|ies)|folders?|emulator|sessions?|git|npm|pip"
    r"|python|code|programs?|servers?|env|path|alias(?:es)?|\.\w*rc|variables?|loops?|type|typed"
    r"|prints?|printed|runs?|ran|execute[sd]?)\b|[$~/]",
    re.IGNORECASE)
_EVERYDAY_FOLDED = re.compile(_EVERYDAY_AROUND.pattern)
_COMPUTER_FOLDED = re.compile(_COMPUTER_AROUND.pattern)


def names_a_shell(text: str) -> bool:
    """Whether ``text`` names a shell command or a place to type one (SHELL). A bare "shell",
    "terminal" or "bash" counts unless the words within ``SHELL_WINDOW`` characters of it are
    a person's and none a computer's. The words of each kind are found in one pass over the text
    (at the first bare word) and looked up by place: a window searched per match cost 2.5 us a
    character on a text of "shell beach" repeated."""
    around: ShellContext | None = None
    for m in SHELL.finditer(text):
        if m.group().lower() not in BARE_SHELL_WORDS:
            return True
        if around is None:
            around = ShellContext(text, text.lower(), 0, len(text))
        if not around.everyday(m.start(), m.end()):
            return True
    return False


class ShellContext:
    """The person's and the computer's words of ``text[lo:hi]`` (found in one pass each), looked
    up by place: whether a bare shell word at ``[start, end)`` has a person's word within
    ``SHELL_WINDOW`` characters and no computer's word."""

    def __init__(self, text: str, folded: str, lo: int, hi: int) -> None:
        # read case-sensitively on the lower-cased text when it keeps the text's places (the
        # words are all lower case; IGNORECASE folds every letter tried: 2x the cost)
        person, computer, read = ((_EVERYDAY_FOLDED, _COMPUTER_FOLDED, folded)
                                  if len(folded) == len(text)
                                  else (_EVERYDAY_AROUND, _COMPUTER_AROUND, text))
        self._person = [w.start() for w in person.finditer(read, lo, hi)]
        self._computer = [w.start() for w in computer.finditer(read, lo, hi)]

    def everyday(self, start: int, end: int) -> bool:
        lo, hi = start - SHELL_WINDOW, end + SHELL_WINDOW
        return _within(self._person, lo, hi) and not _within(self._computer, lo, hi)


def _within(spots: list[int], start: int, end: int) -> bool:
    """Whether a sorted ``spots`` holds a place in ``[start, end)``."""
    i = bisect_left(spots, start)
    return i < len(spots) and spots[i] < end
