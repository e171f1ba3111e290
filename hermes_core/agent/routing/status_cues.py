"""An HTTP status number named as a running system's (a 502 from the server, 502错误, 503ステータス),
apart from a count, a price, a room or a score that shares its digits.

Split from ``code_cues.py`` (which joins these into its technical words) to keep each module to
one job and under ~800 lines. Each pattern is linear in the text it is given.
"""

from __future__ import annotations

# An HTTP status number (4xx, 5xx) beside a part of a running system: "a 502 from the server",
# "a 500 error", "502 Bad Gateway", 502错误, 503ステータス; after a part that returns, throws or
# shows it ("the gateway returned 504", 网关返回504, ページが404に). Not a tip from a server ($500),
# 400 people at a site, a count of errors made, room 502 (502房间, 502号室), a score (502分).
_STATUS = r"[45]\d\d(?![\d,]|\.\d)"
# a status number ends its phrase or goes on as a status does (an error, again, on a request)
_STATUS_ENDS = (r"(?=\s*(?:$|[^\w\s]|(?:errors?|status|response|bad|gateway|service|internal|not"
                r"|forbidden|again|every|each|when|after|on|for|to|and|or|but|because|now"
                r"|sometimes|randomly|intermittently)\b))")
STATUS_NUMBER = (
    rf"(?<![$£€¥]){_STATUS}(?:\s+(?:(?:errors?|status|responses?)\s+)?from\s+"
    r"(?:(?:the|a|an|our|my|his|her|their|its|this|that)\s+)?(?:web\s+|api\s+|app\s+)?"
    r"(?:servers?|prox(?:y|ies)|gateways?|backends?|apis?|load\s+balancers?|nginx|cdn|endpoints?"
    r"|upstream|websites?)\b"
    r"|\s+(?:bad\s+gateway|gateway\s+time-?out|service\s+unavailable|internal\s+server\s+error"
    r"|not\s+found|forbidden|unauthori[sz]ed|too\s+many\s+requests)\b"
    r"|\s*(?:错误|錯誤|状态码|狀態碼|エラー|ステータス|を返|が返))"
    # "a 500 error": one error a page shows, not 400 errors made
    r"|(?:(?<=\ba\s)|(?<=\ban\s)|(?<=\bthe\s)|(?<=http\s))"
    rf"{_STATUS}\s+(?:error|response|status\s+code|page)\b"
    # a status or an error named so ("status 404", "error: 500"), the number ending the phrase
    # or going on as a status does ("status 400 followers" is a count)
    r"|(?:(?<=status\s)|(?<=error\s)|(?<=status:\s)|(?<=error:\s)|(?<=status=))"
    rf"{_STATUS}{_STATUS_ENDS}")
STATUS_AFTER_PART = (
    r"(?=[bcglnpsuw])(?:prox(?:y|ies)|gateways?|backends?|nginx|cdn|upstream"
    r"|load\s+balancers?|websites?|sites?|pages?)\s+(?:returns?|returned|returning|gives?|gave"
    r"|throws?|threw|sends?|sent|shows?|showed|respond(?:s|ed)?\s+with|is\s+returning"
    r"|keeps\s+(?:returning|giving|throwing))\s+(?:an?\s+|http\s+)?"
    rf"{_STATUS}{_STATUS_ENDS}")
# (nor money, a tally or a unit: 500万, 500多人, 400余, 400美元, 400ドル, 500ポイント, 400枚)
_NOT_A_COUNT = (r"(?![\d号號房室分元块塊人个個名位次天年米页頁点円件回万萬亿億多余餘来來美港欧歐英"
                r"韩韓澳加日千百斤克公吨噸岁歳枚本冊頭匹ドポ])")
CJK_STATUS = (
    rf"(?:报|報|返回)\s*{_STATUS}{_NOT_A_COUNT}"
    # a status or error code named so (状态码404, 错误码是500, 返回码: 502)
    r"|(?:状态|狀態|错误|錯誤|返回|响应|響應)(?:码|碼)(?:是|为|為|[:：=])?\s*"
    rf"{_STATUS}{_NOT_A_COUNT}"
    r"|(?:网站|網站|网页|網頁|页面|頁面|网关|網關|代理|后端|後端|负载均衡|負載均衡)"
    r"(?:一直|总是|總是|老是|又|还是|還是)?(?:报|報|返回|出现|出現|显示|顯示)?\s*"
    rf"{_STATUS}{_NOT_A_COUNT}"
    r"|(?:ページ|サイト|ゲートウェイ|プロキシ|バックエンド)(?:が|は|で|から)?\s*"
    rf"{_STATUS}{_NOT_A_COUNT}")
