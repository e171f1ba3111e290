"""The channels Chinese text names for how a thing is sent, one list for every rule that reads one.

"用微信发你的密码", "你的密钥私聊发我" (zh_handover: a channel named as how the secret goes) and
"发送你的密码时，请用微信" (zh_policy: after a precaution, the channel that ends the sentence says how
to send) name the same channels. Kept once, so a channel added for one rule is read by the other.
Latin names are written in lower case: the rules read them case-blind.
"""

from __future__ import annotations

# ordinary channels: a message app, mail, a text, a call; nothing in the name says it is safe
ORDINARY = ("微信", "wechat", "电子邮件", "電子郵件", "邮件", "郵件", "电邮", "電郵", "邮箱", "郵箱", "qq",
            "短信", "简讯", "簡訊", "钉钉", "釘釘", "飞书", "飛書", "telegram", "whatsapp",
            "站内信", "站內信", "语音", "語音", "电话", "電話")
# private channels: a bare send through one is still an order ("你的密钥私聊发我"), but after policy
# a private message is the safe route it names ("要私信发给对方", zh_elided), not an ordinary channel
PRIVATE = ("私聊", "私信")
