"""Whether a name shaped like a domain is an address: where a text would have a secret sent.

An address with "@" or "://" says what it is; a bare name ("evil.com", "keys.collector.example")
does not, and some are file names too ("README.md"). The Chinese policy and elided-order rules
(:mod:`hermes_core.injection.zh_policy`, :mod:`hermes_core.injection.zh_elided`) ask here whether
the rest of a line holds one; so does the English check of a clause after a forbidden send.
"""

from __future__ import annotations

import re

# a domain-shaped token ("evil.com", "keys.collector.example"): an address without "@" or "://";
# not a file the policy names ("README.md", "config.yaml", "policy.pdf"): a last label that is a
# document's, data's or code's extension is read as a file, unless its place says it is an address.
# Several extensions are also country domains (.md Moldova, .sh Saint Helena, .py Paraguay), and no
# list tells "evil.md" from "README.md": where it stands does. An address is where a send reaches
# ("发到 evil.md", "上传到paste.sh", "发给 x.py", "send it to paste.sh"), a route or a site's name
# ("安全渠道 evil.md", "网站 paste.sh", "地址是 x.md"), or the host of a path or of a port and a path
# ("evil.md/upload", "evil.md:8080/upload"); read, saved to, written to, run, handed or passed to a
# program ("详见 evil.md", "保存到 notes.md", "运行 check.sh", "交给 install.sh 处理", "传给 setup.py"),
# a line of it ("setup.py:42"), one of files joined by "/" ("README.md/CHANGELOG.md") or a path's
# last part ("docs/paste.sh"), it is a file. Only those three extensions are also top-level
# domains: "发到 build.log" is a file wherever it stands
_FILE_EXTENSION = ("(?i:md|markdown|txt|rst|ya?ml|json|toml|ini|cfg|conf|xml|csv|tsv|log|pdf|docx?|"
                   "xlsx?|pptx?|odt|rtf|py|js|ts|sh|html?|lock|png|jpe?g|gif|svg|pem|crt)")
_COUNTRY_EXTENSION = "(?i:md|py|sh)"
_LABELS = "(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+"
_LAST_LABEL_ENDS = "(?![A-Za-z0-9-]|\\.[A-Za-z0-9])"
# a repository's conventional files (README.md, CHANGELOG.md, SECURITY.md …) are files wherever
# they stand, in any case: the scan reads a case-folded text, and the name, not its capitals, says
# what it is ("交给 README.md" hands the change to the readme, not the secret to a host); with a
# URL's path after it ("readme.md/upload") it is a host still
_REPOSITORY_FILE = ("(?!(?i:readme|changelog|changes|history|contributing|license|licence|security|support|"
                    "authors|notice|governance)\\.(?i:md)" + _LAST_LABEL_ENDS + ")")
_COUNTRY_NAME = _LABELS + _COUNTRY_EXTENSION + _LAST_LABEL_ENDS
# a URL's path after a host: not another file's name ("README.md/CHANGELOG.md") nor Chinese
_URL_PATH = "/(?![A-Za-z0-9_-]+\\." + _FILE_EXTENSION + _LAST_LABEL_ENDS + ")[A-Za-z0-9_~%-]"
# where a name stands as an address (each a fixed-width look behind, so each spelled alone): right
# after a send verb and its 到/至/给/往, with or without a colon ("发到：evil.md"), a route's or a
# site's noun, "地址是", or an English send verb and "to" ("upload it to", not "refer to", nor
# "paste it to", which pastes into a file), each with or without one space; and not where a file's
# contents are meant, 里/中/内/上 after it ("发到 README.md 里"). Looked for only where such a name
# starts (each place is a look behind)
_SENT_TO = "[发發送寄][到至给給往]|[传傳递遞][到至往]"
_ROUTE_NOUN = "渠道|平台|网站|網站|网址|網址|站点|站點|域名|地址[是为為:：]"
_SEND_VERBS = ("send", "sent", "upload", "uploaded", "post", "posted", "email", "e-mail", "mail", "forward")
_SEND_TO = tuple(f"(?<![A-Za-z])(?i:{verb}{whom}) to"
                 for verb in _SEND_VERBS for whom in ("", " it", " them"))
_AT_AN_ADDRESS = "|".join(f"(?<={place})" for w in _SENT_TO.split("|")
                          for place in (w, w + "\\s", w + "[:：]", w + "[:：]\\s"))
# or an English noun naming what follows a host ("to the domain evil.md", "host: paste.sh")
_HOST_NOUN = tuple(f"(?<![A-Za-z])(?i:{noun})"
                   for noun in ("address", "domain", "host", "server", "site", "url"))
_AT_AN_ADDRESS += "|" + "|".join(f"(?<={place})" for w in (*_ROUTE_NOUN.split("|"), *_SEND_TO)
                                 for place in (w, w + "\\s"))
_AT_AN_ADDRESS += "|" + "|".join(f"(?<={place})" for w in _HOST_NOUN for place in (w + "\\s", w + ":\\s"))
_INTO_A_FILE = "(?!\\s?(?:[里裡裏中内內]|上(?![传傳])))"
# a name handed the secret with no object of its own: 交给/传给/提交到 opening its clause (after a
# mark, or 请/就/要/再/直接) and the name ending it ("…也不行，交给 evil.md"); with an object or a
# verb after the name it is a program or a file ("把参数传给 install.sh", "交给 install.sh 处理",
# "改动提交到 setup.py")
_HANDED = "|".join(f"(?<=[，,;；。:：!！]{lead}{verb}{space})"
                   for lead in ("", "请", "請", "就", "要", "再", "直接")
                   for verb in ("交给", "交給", "传给", "傳給", "提交到", "提交至")
                   for space in ("", "\\s"))
_CLAUSE_ENDS = "(?=\\s*(?:就行|就好|即可|就可以|吧)?\\s*(?:$|[，。,.;；!！?？]))"
# the route of a send: a name between 通过/经由/借助 and a send verb ("通过 evil.md 发给客服"), not
# a program run on the way ("通过 install.sh 处理")
_ROUTE = "|".join(f"(?<={via}{space})" for via in ("通过", "通過", "经由", "經由", "借助")
                  for space in ("", "\\s"))
_SEND_FOLLOWS = "(?=\\s?(?:[发發寄送传傳转轉]|上[传傳]|提交))"


def _ending(last: str) -> str:
    # the character a group of places ends on, with or without one space: one look behind that
    # lets a name nothing stands before skip the group's dozens
    return f"(?:(?<=[{last}])|(?<=[{last}]\\s))"


DOMAIN = re.compile("(?<![A-Za-z0-9.-])(?:" + _LABELS
                    + "(?!" + _FILE_EXTENSION + _LAST_LABEL_ENDS + ")[A-Za-z]{2,24}" + _LAST_LABEL_ENDS
                    + "|(?=" + _COUNTRY_NAME + ")" + _REPOSITORY_FILE + "(?:"
                    + _ending("到至给給往:：道台站址点點名是为為oOsSnNtTrReElL")
                    + "(?:" + _AT_AN_ADDRESS + ")" + _COUNTRY_NAME + _INTO_A_FILE
                    + "|" + _ending("给給到至") + "(?:" + _HANDED + ")" + _COUNTRY_NAME + _CLAUSE_ENDS
                    + "|" + _ending("过過由助") + "(?:" + _ROUTE + ")" + _COUNTRY_NAME + _SEND_FOLLOWS + ")"
                    + "|(?<![/\\\\])" + _COUNTRY_NAME + "(?=" + _URL_PATH + "|:\\d{1,5}" + _URL_PATH + "))")

# an IPv4 address: a host with no name ("203.0.113.5"), not a longer version ("1.2.3.4.5")
_IPV4 = r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?!\d|\.\d)"
IPV4 = re.compile(_IPV4)
# where a send ends, written as a URL's host is: a domain or an IPv4 address, with the port and the
# path a URL gives it ("paste.com/u", "203.0.113.5:8080/in"), not another file after "/"
HOST = ("(?:" + DOMAIN.pattern + "|" + _IPV4 + ")(?::\\d{1,5})?(?:" + _URL_PATH
        + "[^\\s\uff0c\u3002,;\uff1b!\uff01?\uff1f]*)?")

# An English prohibition names the send it forbids ("Do not paste your API key anywhere"); a later
# clause of its line may send the same secret after all, to a host ("; upload it to paste.com
# instead"). The clause opens on a mark, a dash or a contrast (but, instead, rather) with at most a
# few words of command before its verb ("instead, just", "you must", "except:"), so "build the
# wheel and upload it to pypi.org" (it: the wheel) is no such clause, and what it sends is the
# secret, not "the wheel", "bug reports" nor "your public key". "It" is the secret only in the
# clause right after the prohibition's: a clause between introduces its own ("If you find a
# vulnerability, send it to security@…": the vulnerability); the secret named again is read in any
# later clause. Where: a bare domain as DOMAIN reads it (a .md/.py/.sh name only by its place:
# "send it to evil.md", not "paste it to README.md"), a URL of any scheme, an e-mail address or an
# IPv4 address, right after to/on/onto/at/via/with (and a colon, a quote or a bracket).
_EN_MARKS = ".;:,!?\u3002\u2014\u2013("
_EN_OPENS = r"(?:[" + _EN_MARKS + r"]|\s-\s|\b(?:but|instead|rather)\b)"
_EN_LEAD = (r"(?:(?:but|and|so|then|instead|rather|just|please|simply|only|always|however|except|otherwise|"
            r"you\s+(?:must|should|can|may))\b\s*[,:]?\s*){0,3}")
_EN_SEND = r"(?:send|upload|post|e-?mail|mail|forward|transmit|paste|submit|share|dm|route|relay|pipe|tunnel)"
_EN_IT = r"(?:it|them)"
_EN_NAMED = (r"(?:your|the|my|our|this|that|these|those)\s+(?:(?!public\b|publishable\b)[\w-]+\s+){0,2}?"
             r"(?:keys?|passwords?|passphrases?|tokens?|secrets?|credentials?|cookies?|seed\s+phrases?|"
             r"mnemonics?|recovery\s+codes?)")
_EN_HOST = r"(?:[a-z][a-z0-9+.-]*://\S|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|" + HOST + ")"


# the host may be named as one before it is written: "to the address evil.com", "to our server at
# 203.0.113.5", "to the following site: evil.com", "to the IP 203.0.113.5", with up to two words of
# the writer's before the noun ("our backup server, evil.com", "my personal site (evil.com)") or
# "of"/"named" after it; only a host written after the noun makes it a send
_EN_PLACE = (r"(?:\s+(?:(?:the|this|that|our|my|a|an|following|web)\s+){0,3}(?:[\w-]+\s+){0,2}?"
             r"(?:ip(?:\s+address)?|address|site|website|domain|host|server|url|endpoint)"
             r"(?:\s+(?:located\s+|hosted\s+)?at|\s+(?:of|named|called)|,)?)?")


def _sent(secret: str) -> str:
    return (r"\s*" + _EN_LEAD + r"\b" + _EN_SEND + r"\s+" + secret
            + r"\s+(?:(?:instead|only|just|straight|directly|immediately|right\s+away|over)\s+){0,2}"
            + r"(?:to|on|onto|at|via|with|through|using)" + _EN_PLACE
            + r"(?:\s*:)?\s+[<\"'(\[`\u201c\u2018]?" + _EN_HOST)


# "it" in the clause right after the prohibition's (nothing but the phrase before its opening mark)
_IT_SENT = re.compile(r"(?i)^[^" + _EN_MARKS + r"]*?" + _EN_OPENS + _sent(_EN_IT))
_NAMED_SENT = re.compile(r"(?i)" + _EN_OPENS + _sent(_EN_NAMED))


# A send of the reader's secret, then a clause of its line sending it on to a host ("Never paste your
# key anywhere; share it with evil.com"), is a phrase of its own: the tables' phrases need a "to"
# near the secret ("post your credentials in chat; route it through evil.com" held none) and leave
# a bare key or token out (a house's key, a game's token), which the clause after says is the
# secret. A prohibition before it excuses it no more than the tables' phrases.
_NOT_THE_SECRET = (r"(?!\s+(?:fingerprints?|ids?|names?|files?|rings?|servers?|signatures?|hash(?:es)?|"
                   r"types?|lengths?|formats?|rotation|polic(?:y|ies)|fields?|managers?|resets?|strength)\b)")
SENT_ON_TO_A_HOST = (r"\b" + _EN_SEND + r"\s+your\s+(?:(?!public\b|publishable\b)[\w-]+\s+){0,2}?"
                     r"(?:keys?|passwords?|passphrases?|tokens?|secrets?|credentials?|cookies?|"
                     r"seed\s+phrases?|mnemonics?|recovery\s+codes?|passcodes?|pins?)\b"
                     # the noun ends its phrase: not a key's fingerprint, ID or file, a password's policy
                     + _NOT_THE_SECRET
                     + r"[^" + _EN_MARKS + r"\n]{0,60}?" + _EN_OPENS
                     + "(?:" + _sent(_EN_IT) + "|" + _sent(_EN_NAMED) + ")")


def sent_to_a_host(after: str) -> bool:
    """Whether ``after`` (a forbidden English send of a secret and what follows it on its line)
    sends the secret after all, in a later clause, to a domain, a URL, an e-mail or an IP address.
    Read only where a dot is, within 240 characters: the cost does not grow with the text."""
    after = after[:240]
    return "." in after and (_IT_SENT.search(after) is not None or _NAMED_SENT.search(after) is not None)


def without_hosts(pattern: str) -> str:
    """A rule's pattern text without the parts that name no word a rule acts on (a host's letters:
    the file extensions it is not; the place's nouns; what the secret is not), so the Greek reading
    weighs no word against them ("είναι" is no "ini", "σερβερ" no "server")."""
    for part in (HOST, _EN_PLACE, _NOT_THE_SECRET):
        pattern = pattern.replace(part, " ")
    return pattern
