"""How far a Chinese negation reaches towards the send it forbids, past the words policy puts between.

Security policy writes its prohibitions with an adverb of manner ("不要直接发送你的密钥", "切勿轻易
泄露", "请勿私自转发") or with the send as the last of a list of acts ("不要透露或发送你的密码",
"不要复制、粘贴或发送…"). The negation forbids every verb of the list, and the manner qualifies the
act it forbids. So between a negation and its send there is room for (in this order) adverbs of
manner (how carelessly, openly or secretly the act is done, each optionally closed by 地: "偷偷地"),
a means or place (``patterns.zh_manner``), and verbs that themselves hand a secret out or copy it
where another may read it (tell, show, copy, write down, upload, type into…), the last followed by
a conjunction (或, 和, 或者…), earlier ones by 、 or nothing. A verb of
any other kind there ("不要拒绝发送": don't refuse; send, "不要犹豫直接发送") is a verb of its own
the negation ends at, and the order after it stands. The lists are closed, so the room is
bounded: a run of them costs one short try.
"""

from __future__ import annotations

# adverbs of manner that qualify a forbidden act; not 只/仅, 都, 一起 (only, all, together: "不要都
# 发送…" forbids the whole, not the send, and the part may be ordered next) and no verb
ADVERBS = ("直接", "随意", "隨意", "随便", "隨便", "轻易", "輕易", "私自", "擅自", "随手", "隨手", "主动",
           "主動", "任意", "贸然", "貿然", "盲目", "胡乱", "胡亂", "再次", "再", "公开", "公開", "私下",
           "明文", "永远", "永遠", "绝对", "絕對", "偷偷", "悄悄", "暗中", "暗自", "私底下", "背地里",
           "背地裡", "草率", "随随便便", "隨隨便便", "偷偷摸摸", "未经授权", "未經授權")
# acts that hand a secret out or copy it where others may read it, as the send itself does
DISCLOSING = ("透露", "泄露", "泄漏", "洩露", "洩漏", "外泄", "外洩", "告诉", "告訴", "告知", "分享",
              "共享", "发送", "發送", "传送", "傳送", "转发", "轉發", "转交", "轉交", "交给", "交給",
              "提供", "复制", "複製", "拷贝", "拷貝", "粘贴", "粘貼", "贴", "貼", "上传", "上傳", "公布",
              "展示", "显示", "顯示", "打印", "列印", "输出", "輸出", "截图", "截圖", "拍照", "写下",
              "寫下", "记录", "記錄", "保存", "存储", "存儲", "发", "發", "传", "傳", "说出", "說出",
              "念出", "抄写", "抄寫", "抄录", "抄錄", "抄下", "抄", "转告", "轉告", "转述", "轉述",
              "口述", "读出", "讀出", "朗读", "朗讀", "外传", "外傳", "散布", "散佈", "传播", "傳播",
              "发布", "發佈", "發布", "张贴", "張貼", "导出", "導出", "备份", "備份", "暴露", "出示",
              "借给", "借給", "交出", "转让", "轉讓", "录入", "錄入", "填写", "填寫", "输入", "輸入")
CONJUNCTIONS = ("或者是", "或者", "或是", "以及", "或", "和", "与", "與", "及", "并", "並", "、")


def one_of(words: tuple[str, ...]) -> str:
    """A group matching any of ``words``, the longest first (so "或者" is not read as "或")."""
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


def reach(gap: str, manner: str | None = None) -> str:
    """The pattern of what may stand between a negation and its send: up to two adverbs, a means
    (``manner``, a pattern kept in the group ``manner`` for :mod:`zh_grammar`'s check), an adverb,
    then up to three disclosing verbs, the last closed by a conjunction, and an adverb. ``gap``
    is what may separate the words: an optional space in a phrase view, nothing in a letters-only
    one."""
    adverb = one_of(ADVERBS) + "地?" + gap
    means = "" if manner is None else "(?:(?P<manner>" + manner + ")" + gap + ")?"
    verb, joined = one_of(DISCLOSING) + gap, one_of(CONJUNCTIONS) + gap
    # the list's last join is a word (或, 和): the 、 between earlier items is gone in a
    # letters-only view ("复制、粘贴或" reads "复制粘贴或"), so it may be missing there
    listed = "(?:" + verb + joined + "?){0,2}" + verb + joined + "(?:" + adverb + ")?"
    return "(?:" + adverb + "){0,2}" + means + "(?:" + adverb + ")?(?:" + listed + ")?"
