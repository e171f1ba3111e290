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
_COUNTRY_NAME = _LABELS + _COUNTRY_EXTENSION + _LAST_LABEL_ENDS
# a URL's path after a host: not another file's name ("README.md/CHANGELOG.md") nor Chinese
_URL_PATH = "/(?![A-Za-z0-9_-]+\\." + _FILE_EXTENSION + _LAST_LABEL_ENDS + ")[A-Za-z0-9_~%-]"
# where a name stands as an address (each a fixed-width look behind, so each spelled alone): right
# after a send verb and its 到/至/给/往 (not 交给, 传给, 提交到: what a program is handed), a route's or
# a site's noun, "地址是", or an English send verb and "to" ("upload it to", not "refer to"), each
# with or without one space; looked for only where such a name starts (each place is a look behind)
_SENT_TO = "[发發送寄][到至给給往]|[传傳递遞][到至往]"
_ROUTE_NOUN = "渠道|平台|网站|網站|网址|網址|站点|站點|域名|地址[是为為:：]"
_SEND_VERBS = ("send", "sent", "upload", "uploaded", "post", "posted", "email", "e-mail", "mail", "forward",
               "paste")
_SEND_TO = tuple(f"(?<![A-Za-z])(?i:{verb}{whom}) to"
                 for verb in _SEND_VERBS for whom in ("", " it", " them"))
_AT_AN_ADDRESS = "|".join(f"(?<={place})" for w in (*_SENT_TO.split("|"), *_ROUTE_NOUN.split("|"),
                                                      *_SEND_TO)
                          for place in (w, w + "\\s"))
DOMAIN = re.compile("(?<![A-Za-z0-9.-])(?:" + _LABELS
                    + "(?!" + _FILE_EXTENSION + _LAST_LABEL_ENDS + ")[A-Za-z]{2,24}" + _LAST_LABEL_ENDS
                    + "|(?=" + _COUNTRY_NAME + ")(?:" + _AT_AN_ADDRESS + ")" + _COUNTRY_NAME
                    + "|(?<![/\\\\])" + _COUNTRY_NAME + "(?=" + _URL_PATH + "|:\\d{1,5}" + _URL_PATH + "))")
