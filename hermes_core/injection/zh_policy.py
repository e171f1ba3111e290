"""Whether a Chinese send of a secret is what a sentence speaks of, not what it orders.

Chinese policy negates an act after it as often as before it: "把你的密码发给同事也不行" (sending
your password to a colleague is not allowed either), "发送密码到外部网站属于违规行为". The send is
the subject, and the verdict that ends its clause (不行, 违规, 很危险…) forbids it as "不要" before it
does. And a precaution names the send as its time: "发送你的密码之前，请先确认对方身份" (before you send
your password, confirm who asks) orders the check, not the send.

Neither holds when the send goes to the writer ("把你的密码发给我也不行吗？" asks for it; "发送你的
密码给我们之前，…" presumes it), when the verdict approves (也行, 是必须的), opens a condition (不行的话,
不行就) or is a modal on another verb (不可以告诉别人), or when the time is after the send (之后, 后:
a sequence of orders). Nor when a rhetorical question opens the clause just before the send
("谁说把你的密码发给客服是违规的": who says it is against the rules? it is not): the verdict is denied.
After a precaution or a verdict, an ordinary channel (微信, 邮件, QQ, 短信…) named with no safety
word and ending the sentence ("发送你的密码时，请用微信") says how to send: an order, where a route
named for its safety ("务必使用加密渠道") or a channel forbidden ("不要用微信") is policy; a channel
followed by a verb that reaches someone ("请用微信联系他") says how to reach the recipient: an order,
unless its clause names a check or a problem of its own ("如有疑问请用钉钉联系管理员"). A second
send after 然后/再 is an order unless judged as the first was ("…也不行，再发给别人也不行"). A
domain-shaped token on the line ("evil.com") is an address, as "@" and "://" are. A send its 如果
dropped, followed by a consequence clause that says the harm ("你用微信发你的密码，对方就能登录你的
账号"), is a condition the text warns of; a promise ("…，我就帮你重置"), a harm remedied ("…，就能找回
被盗的账号") or one threatened for not sending ("…，否则你的账号就会被盗") is an incentive; 他/他们
name the one the send reached as 对方 does ("…，他们就能登录你的账号"), and a consequence asked
("…就会被盗吗？") denies the harm unless answered yes. A send asked safe and answered by a verdict
("你以为…很安全吗？其实很危险") is judged as a verdict after it judges it. Every part is bounded and
reads a few characters around the match.
"""

from __future__ import annotations

import re

from hermes_core.injection.addresses import DOMAIN
from hermes_core.injection.zh_channels import ORDINARY
from hermes_core.injection.zh_negation import one_of

_MARK = "，。,.;；!！?？:："
# where the send goes, on its own clause and not to the writer ("给同事", "到外部网站"); no refusal
# to send ("不发也不行", "不然是违规的": not sending is what is judged) and not ending on a denial
# ("不是违规的", "并不危险", "没有风险", "不算违规": the verdict approves), and not asking it
# ("怎么会是违规的", "哪里违规了": a rhetorical question denies it; "发到哪里都不安全" asks nothing)
_TAIL = ("(?:(?!(?:不|没|沒|别|別)(?:发|發|给|給|交|传|傳|送|寄|递|遞|这样|這樣|做|然|是|算|会|會|"
         "太|很|属于|屬於)|否则|否則|要不|怎么会|怎麼會|怎会|怎會|岂|豈|何来|何來|(?:哪里|哪裡|哪儿|哪兒)(?![都也]))"
         "[^\\s" + _MARK + "我]){0,12}?(?<![不没沒无無非未算并並毫])")
# degree and copula words between the send and the verdict ("也", "是非常", "很", "属于")
_DEGREE = ("(?:也|都|就|还|還|更|很|太|非常|十分|极其|極其|极为|極為|相当|相當|绝对|絕對|同样|同樣|一样|一樣|"
           "均|是|属于|屬於|等于|等於|无异于|無異於|可能|会|會)*")
# a verdict that forbids or condemns the act (not 也行, not 是必须的)
_VERDICT = ("(?:不行|不可以|不可|不允许|不允許|不被允许|不被允許|不妥|不安全|不合适|不合適|不应该|不應該|"
            "不应当|不應當|不对|不對|不明智|不可取|不可接受|违规|違規|违法|違法|违反规定|違反規定|被禁止|禁止|"
            "危险|危險|有风险|有風險|高风险|高風險|错误|錯誤|大忌)")
# what may close the verdict: 的, a noun for the act, a particle (not 吗: a question asks)
_CLOSE = "(?:的做法|的行为|的行為|的|行为|行為|做法|之举|之舉)?(?:了|啊|呀|哦|喔)?"
# a clause a precaution opens with, where no mark is left (a letters-only view)
# (or a means forbidden: "发送你的密码时不要用微信"; not a bare 不要: "…时不要犹豫" urges the send)
_OPENERS = ("(?:请|請|先|务必|務必|一定|必须|必須|需要|要|应|應|最好|记得|記得|记住|記住|确认|確認|核实|核實|"
            "检查|檢查|验证|驗證|注意|留意|"
            "(?:不要|不能|别|別|勿|请勿|請勿|切勿|禁止)(?:用|使用|通过|通過|经由|經由|在))")
# the time before or of the send ("之前", "前", "时", "的时候"), not after it
_WHEN = "(?:之前|以前|前|的时候|的時候|之时|之時|时|時)"

# a consequence clause after the send's, its 如果 dropped ("你用微信发你的密码，对方就能登录你的账号":
# if you send it, they can log in): the send is the condition the text warns of. Only a harm the send
# itself does reads so, said as what happens: the clause opens on who suffers or does it, with only a
# modal, a degree or a passive between it and the harm (after 就/便/都/也, or 那么/则). The reader's
# account or money stolen, unsafe, at risk ("你的账号就可能被盗"), the reader harmed ("就很危险",
# "你也会被骗"), or someone other (对方, 别人, 骗子…) taking it ("骗子便能转走你的钱", "对方就能登录
# 你的账号"). Not the writer (我就帮你重置: a promise for the secret); not a harm remedied, denied or
# guarded against (就能找回被盗的账号, 就能降低风险, 就盗不走, 对方就不能登录, 就能防止被盗); not a
# reach into what is not the reader's, or one that goes on to help (对方就能查看你的问题, …登录帮你处理);
# not the thief harmed (骗子就会上当) or the reader made one (你就能盗取…); and not a clause with a
# condition of its own (否则, 晚了, 逾期…你的账号就会被盗: a threat for not sending)
_OTHERS = ("(?:对方|對方|别人|別人|他人|陌生人|任何人|黑客|骗子|騙子|攻击者|攻擊者|不法分子|犯罪分子|坏人|"
           "壞人|第三方|有人)")
# or a pronoun for the one the send reached ("…，他们就能登录你的账号"): the clause says what they do
_PRONOUN = "(?:他们|他們|她们|她們|他|她)"
# a harm someone does to the reader, and one the reader or theirs suffers
_DONE = ("(?:盗|盜|窃|竊|偷|泄|洩|骗|騙|入侵|冒充|冒用|冒名|劫持|破解|转走|轉走|取走|滥用|濫用)")
_SUFFERED = "(?:被黑|不安全|危险|危險|风险|風險|损失|損失|遭殃|中招|上当|上當)"
# what the reader owns that a send of their secret puts at risk
_ASSET = ("(?:账号|帳號|帐号|帳号|账户|帳戶|帐户|邮箱|郵箱|钱包|錢包|钱|錢|资金|資金|资产|資產|财产|財產|"
          "存款|积蓄|積蓄|银行卡|銀行卡|信用卡|个人信息|個人資訊|信息|資訊|资料|資料|隐私|隱私|数据|數據|电脑|電腦|"
          "手机|手機|设备|設備|系统|系統|服务器|伺服器|身份|一切)")
_WHOSE = "(?:你的|您的|你们的|你們的|你|您)?"
# (or two: "你的账号和钱", "账号里的钱")
_THEIRS = _WHOSE + _ASSET + "(?:(?:和|与|與|跟|、|里的|裡的|中的|上的)" + _WHOSE + _ASSET + ")*"
_READER = "(?:你|您|你们|你們)?"
# a modal, a degree, or a verb that brings the harm on, between who and the harm; then a passive
_RUN = ("(?:有可能|很可能|极可能|極可能|可能|能够|能夠|能|可以|可|会|會|将|將|要|很|更|非常|十分|极易|極易|"
        "很容易|容易|易|立刻|立即|马上|馬上|直接|轻易地?|輕易地?|随时|隨時|随意|隨意|全部|全都|统统|統統|"
        "一起|有|面临|面臨|陷入|处于|處於|存在|变得|變得|造成|带来|帶來|导致|導致|引发|引發|蒙受|是){0,4}")
_PASSIVE = "(?:被|遭到|遭受|遭|受到)"
_HARMED = _RUN + "(?:" + _PASSIVE + _RUN + _DONE + "|" + _SUFFERED + ")"
_HARMS = _RUN + _DONE
# the harm said, not denied after it (盗不走) nor qualifying a noun (被盗的钱就能追回; 被盗的风险 is one)
_SAID = "(?![不没沒]|的(?!风险|風險|可能|危险|危險|隐患|隱患)[^\\s" + _MARK + "])"


def _harm_after(so: str) -> str:
    # a guess may stand before 就 ("你的账号可能就被盗了")
    so = "(?:可能|也许|也許|或许|或許|很快|马上|馬上|立刻)?" + so
    return ("(?:" + _THEIRS + so + "(?:" + _HARMED + "|" + _HARMS + ")|" + _READER + so + _HARMED
            + "|(?:" + _OTHERS + "|" + _PRONOUN + ")" + so + _HARMS + ")" + _SAID)


_ACCESS = ("(?:登录|登錄|登入|登陆|登陸|访问|訪問|控制|接管|进入|進入|看到|看见|看見|查看|拿到|获取|"
           "獲取|得到|掌握|读取|讀取|使用|动用|動用|用)")
_SO = "(?:就|便|都|也|也就)"
_REACHES = ("(?:就|便|也就|马上就|馬上就|立刻就|很快就)(?:能|可以|可|会|會|能够|能夠)?"
            "(?:轻易地?|輕易地?|随意|隨意|直接|马上|馬上|立刻)?" + _ACCESS
            + "(?:(?:它|它们|它們)" + _ACCESS + ")?")
# asked ("…就能登录你的账号吗？", "…就会被盗？"), the harm is a rhetorical question that denies it (it
# will not be stolen: a reassurance to send) unless the answer after it says yes ("吗？当然会")
_YES = ("\\s*(?:当然|當然|肯定|绝对|絕對|确实|確實)?(?:会|會|能|可以|是|是的|对|對|没错|沒錯)(?:的|啊|呀|了)?"
        "(?=$|[\\s，,。.!！;；])")
_NOT_ASKED = ("(?=[^\\s" + _MARK + "]{0,6}?(?:吗|嗎)?[?？]" + _YES + "|(?![^\\s" + _MARK + "]{0,6}?"
              "(?:吗|嗎|[?？])))")
_CONSEQUENCE = ("(?:(?:那么|那麼|那样|那樣|则|則)" + _harm_after(_SO + "?") + "|" + _harm_after(_SO)
                + "|" + _OTHERS + _REACHES + "(?:" + _WHOSE + _ASSET + ")?(?:了|啦|啊|呀)?"
                "(?=(?:吗|嗎)?(?:$|[\\s" + _MARK + "]))"
                # he or they (the one the send reached) into what is named the reader's
                + "|" + _PRONOUN + _REACHES + "(?:你|您|你们|你們)的" + _ASSET + "(?:了|啦|啊|呀)?"
                "(?=(?:吗|嗎)?(?:$|[\\s" + _MARK + "])))" + _NOT_ASKED)
# in a letters-only view no mark ends the send's clause: a time or a condition of its own before the
# consequence (晚了, 逾期, 否则) makes it a threat
_LATE = re.compile("晚|迟|遲|过了|過了|逾期|超时|超時|以后|以後|之后|之後|小时后|小時後|天后|天後|"
                   "否|不然|要不|再不")

# a send asked safe ("…很安全吗？", "…没问题吗？") and answered by a verdict that forbids it ("其实很危险",
# "不，这很危险"): the question is rhetoric its answer refutes. A denial opening the answer (不, 错)
# needs its mark ("不危险" says it is safe); in a letters-only view only 吗 marks the question and a
# word (其实, 实际上) the answer
_SAFE_WORD = ("(?:安全|稳妥|穩妥|保险|保險|可靠|靠谱|靠譜|没问题|沒問題|没事|沒事|可以|行|合适|合適|"
              "放心|明智|没有风险|沒有風險)")
_BUT_IN_FACT = "(?:其实|其實|实际上|實際上|事实上|事實上|实则|實則|恰恰相反|相反)"
_REFUTED = ("(?:" + _BUT_IN_FACT + "[，,]?|(?:不|不是|不是的|当然不|當然不|错|錯|错了|錯了)[，,!！。.])?\\s*"
            "(?:这|這|这样|這樣|这样做|這樣做|那|它)?")
_ASKED_SAFE = re.compile(_TAIL + _DEGREE + _SAFE_WORD + "(?:的|了)?(?:吗|嗎|么|麼)?\\s*[?？]\\s*" + _REFUTED
                         + _DEGREE + _VERDICT + _CLOSE + "(?=$|[\\s" + _MARK.replace("?？", "") + "])")
_ASKED_SAFE_LETTERS = re.compile(_TAIL + _DEGREE + _SAFE_WORD + "(?:的|了)?(?:吗|嗎)" + _BUT_IN_FACT + "?"
                                 + _DEGREE + _VERDICT + _CLOSE + "(?=$|" + _OPENERS + ")")
_JUDGED = re.compile(_TAIL + _DEGREE + _VERDICT + _CLOSE + "(?=$|[\\s" + _MARK.replace("?？", "") + "])")
_JUDGED_LETTERS = re.compile(_TAIL + _DEGREE + _VERDICT + _CLOSE + "(?=$|" + _OPENERS + ")")
_TIMED = re.compile(_TAIL + "\\s?" + _WHEN + "(?=[，,]|\\s?" + _OPENERS + ")")
_TIMED_LETTERS = re.compile(_TAIL + _WHEN + "(?=" + _OPENERS + ")")
_CONDITION = re.compile("(?P<tail>" + _TAIL + ")[，,]\\s*(?P<so>" + _CONSEQUENCE + ")")
_CONDITION_LETTERS = re.compile("(?P<tail>" + _TAIL + ")(?P<so>" + _CONSEQUENCE + ")")

# the fake-support script says the warning's words in an order's mood: the send urged (请, 快, 现在就,
# 麻烦…, or 吧 closing its clause: "请把你的密码发给客服，他就能登录你的账号"), or the clause after the
# consequence reassuring, urging or promising help ("，放心", "。快点！", "，帮你解决问题") and not
# warning ("，所以千万不要这样做"). A warning says what anyone (别人, 陌生人, 他) does with the secret
# and urges nothing
_URGED = re.compile("(?:请|請|快|赶快|趕快|赶紧|趕緊|马上|馬上|立即|立刻|现在|現在|务必|務必|"
                    "一定要|麻烦|麻煩|劳驾|勞駕|直接)(?:就)?(?:你|您|你们|你們)?\\s*(?:先)?(?:把|将|將)?\\s*$")
_CLOSED_BY_BA = re.compile("(?:吧|嘛)[，,\\s]?$")
_REASSURES = re.compile("放心|担心|擔心|(?:很|是|绝对|絕對|非常|十分)安全|快点|快點|赶快|趕快|赶紧|"
                        "趕緊|尽快|盡快|抓紧|抓緊|帮你|幫你|帮您|幫您|为你|為你|为您|為您|替你|解决|"
                        "解決|处理|處理|解锁|解鎖|恢复|恢復")
_WARNS = re.compile("骗|騙|千万|千萬|切勿|不要|不能|"
                    "(?<!不用)(?<!无需)(?<!無需)(?<!不必)(?:别|別)(?!担心|擔心)|小心|警惕|谨慎|謹慎|当心|當心|所以|因此")
# or the send handed to a role the writer poses as help and reached by it, 对方 or a pronoun: "把你的
# 密码发给客服，他就能登录你的账号" is the script's promise. A harm (盗, 骗), a reach by 骗子 or 黑客, an
# explicit 如果 or a role the text calls fake or quotes (假客服, 所谓的客服, 冒充客服的人, "客服") is the
# warning's
_HELPER = re.compile("客服|管理员|管理員|工作人员|工作人員|技术支持|技術支持|售后|售後|官方|专员|"
                     "專員|安全中心|银行|銀行|平台")
_FAKE = re.compile("假|冒充|冒牌|自称|自稱|所谓|所謂|虚假|虛假|山寨|伪|偽|[\"“”「」『』]")
_REACHED_BY = re.compile("(?:对方|對方|" + _PRONOUN + ")" + _REACHES)
# an explicit condition (如果, 一旦…) before the send is a warning's, whoever the send went to
_IF = re.compile("(?:如果|如|若|若是|要是|假如|假若|倘若|一旦|万一|萬一)(?:你|您|你们|你們)?\\s*"
                 "(?:把|将|將)?\\s*$")


def _scripted(before: str, sent: str, m: re.Match[str], rest: str, letters: bool) -> bool:
    tail = m.group("tail")
    if (_URGED.search(before) or (not letters and _CLOSED_BY_BA.search(sent + tail))
            or (letters and "吧" in sent + tail)):
        return True
    if (_REACHED_BY.match(m.group("so")) and _HELPER.search(sent + tail) and not _FAKE.search(sent + tail)
            and not _IF.search(before)):
        return True
    after = rest[m.end():].lstrip(_MARK + " 了啦吗嗎")
    clause = after[:10] if letters else re.split("[" + _MARK + "]", after, maxsplit=1)[0]
    return _REASSURES.search(clause[:10]) is not None and _WARNS.search(clause) is None


# a send to the writer or to an address later on the line ("…也不行，发给我", "…之前，先发一份给我"),
# an address anywhere on it, or how or where to send named by what the writer points at ("请用这个
# 链接", "请填写在这个表单里", "回复本邮件", "上传到这里") or copied to another ("抄送"): the verdict
# or the time was only the way to the order, as is the send itself after the precaution ("然后发给
# 客服"). A link only checked ("确认这个链接是否…") is no route
_POINTED = ("(?:这个|這個|那个|那個|这里|這裡|這裏|这儿|這兒|此(?![前后後时時外])|以下|下面|如下|"
            "本(?=邮件|郵件|消息|信息|訊息|页面|頁面|网站|網站|链接|鏈接|表单|表單))")
_TO_WRITER = re.compile("(?:发|發|传|傳|寄|交|递|遞)(?:送|给|給|到|至)?(?:一份|一下|一遍|过去|過去)?"
                        "(?:给|給)?\\s*(?:我(?![的])|过来|過來)|@[\\w-]+\\.|://|抄送|"
                        "(?:用|使用|通过|通過|经由|經由|借助|点击|點擊|打开|打開|访问|訪問|填写|填寫|填|"
                        "提交|上传|上傳|粘贴|粘貼|输入|輸入|回复|回覆|发送|發送|发|發)"
                        "(?:到|至|在|进|進|入|给|給)?" + _POINTED)
# a precaution or a verdict, then the send itself: "…，然后发给客服" (not "再决定是否发送"); an
# order unless that send is judged as the first was ("…也不行，再发给别人也不行")
_THEN = re.compile("(?:然后|然後|再|接着|接著|随后|隨後)[^，。,.;；!！?？]{0,4}?"
                   "(?:发|發|传|傳|寄|交|递|遞|提交|上传|上傳)(?:送)?(?:给|給|到|至)")
# an ordinary channel named, with no safety word, ending its sentence: how to send ("…，请用微信",
# "…务必通过邮件"); not "请用加密邮件", "不要用微信", "请用微信确认对方身份"
# (zh_channels' ordinary ones: a private message is the safe route policy names, zh_elided)
_CHANNEL = one_of(ORDINARY)
# (or two joined: "务必通过电子邮件或微信"); a channel followed by a verb that reaches someone says how
# to reach where the secret goes ("请用微信联系他", "…加他") unless its clause names a check ("请用电话
# 联系他确认身份"); a verb of another kind is another act ("用微信发文件没问题", "请用微信确认对方身份")
# (not 通知: a notice tells that something happened, "请用邮件通知管理员", and hands nothing over)
_CONTACT = "(?:联系|聯繫|联络|聯絡|找|加|添加|告诉|告訴)"
_REACH = "(?:" + _CONTACT + "|发给|發給|交给|交給|转给|轉給)"
_BY_CHANNEL = re.compile("(?:用|通过|通過|经由|經由|走)" + _CHANNEL + "(?:(?:或者|或|和|、)" + _CHANNEL + ")*"
                         "(?P<rest>(?:发送|發送|发|發|传|傳|寄)?(?:给|給|过来|過來)?(?=$|[\\s，,。.;；!！])|"
                         + _REACH + "[^\\s" + _MARK + "]{0,16})", re.IGNORECASE)
# a problem of its own opening the channel's clause ("忘记密码请用电话联系IT部门", "如有疑问请用钉钉联系
# 管理员"): whom to contact when something goes wrong, not where the secret goes
_CONTACTED = re.compile(_CONTACT)
_PROBLEM = re.compile("疑问|疑問|问题|問題|可疑|异常|異常|忘记|忘記|忘了|丢失|丟失|被盗|被盜|泄露|洩露|"
                      "困难|困難")
_CHECK = re.compile("确认|確認|核实|核實|验证|驗證|核对|核對|求证|求證|确定|確定|核查|查证|查證|问清|問清|"
                    "询问|詢問|辨别|辨別|鉴别|鑒別")
# a send through the channel to a pronoun and then an object ("用微信发给他文件", "发给对方一个验证码")
# sends that object, not the secret (a secret there is a send of its own the scan matches); not a
# particle or a permission after the pronoun ("发给他吧", "发给他也行"), nor one after a word that
# only points at the secret or counts it (它, 全部, 一份: "发给他一份没问题"); 他们 is one pronoun, not
# 他 sending 们 (zh_elided reads a permission the same way: "…，用微信发给他文件没问题" permits no
# send of the secret)
PRONOUN_THEN_OBJECT = re.compile("(?:他们|他們|她们|她們|(?:他|她)(?![们們])|对方|對方)"
                                 "(?!(?:它们|它們|它|全部|全都|一份|一个|一個|这个|這個)?"
                                 "(?:吧|啊|呀|哦|了|也|都|就|好|行|即可|没问题|沒問題|可以|一下|过去|過去|"
                                 "[\\s" + _MARK + "]|$))")
_ANOTHER_OBJECT = re.compile("(?:发给|發給|交给|交給|转给|轉給)" + PRONOUN_THEN_OBJECT.pattern)
# ... unless a denial stands before it, over urging words ("不要用微信", "请勿使用短信")
_DENIED = re.compile("(?:[不勿别別没沒禁]|不要|不能|不可|不得|不用)"
                     "(?:请|請|务必|務必|一定|要|最好|就|直接){0,3}$")


def _by_channel(rest: str) -> bool:
    for m in _BY_CHANNEL.finditer(rest):
        if _CHECK.search(m.group("rest")) or _ANOTHER_OBJECT.match(m.group("rest")):
            continue
        before = rest[max(0, m.start() - 12):m.start()]
        if _CONTACTED.match(m.group("rest")) and _PROBLEM.search(re.split("[" + _MARK + "]", before)[-1]):
            continue
        if _DENIED.search(before[:-1] if before.endswith("使") else before) is None:
            return True
    return False


# a rhetorical question opening the clause just before the send denies the verdict it asks about:
# "谁说…是违规的", "难道…不安全" (not "谁都知道", not "不管谁说什么，…")
# (not a question about who said it, "你知道谁说…吗"; not 难道 over a negation, "难道不知道…": a
# question that asks "don't you know?" asserts the verdict)
_RHETORICAL = re.compile("(?:(?<![管论論道问問])(?:谁|誰)(?:敢|会|會|能|又|还|還|曾)?"
                         "(?:说|說|讲|講|规定|規定|告诉你|告訴你)(?:过|過|了)?(?!什么|什麼)|"
                         "凭什么说|憑什麼說|哪里说|哪裡說|哪条规定|哪條規定)[^，。,.;；!！?？:：\\s]{0,4}$|"
                         "(?:难道|難道)[^，。,.;；!！?？:：\\s不没沒]{0,4}$|"
                         # or opening an earlier clause of the sentence, the send's clause its object:
                         # "谁说过，把…是违规的" (not "谁说的都不算，…", not "谁说的？": its own sentence)
                         "(?:(?<![管论論道问問])(?:谁|誰)(?:敢|会|會|能|又|还|還|曾)?(?:说|說|讲|講|规定|規定|"
                         "告诉你|告訴你)|凭什么说|憑什麼說|哪里说|哪裡說|哪条规定|哪條規定|难道说|難道說)"
                         "(?:过|過|了|的)?[，,:：]\\s*[^，。,.;；!！?？:：\\s]{0,4}$")


def _sent_then(rest: str, judged: re.Pattern[str]) -> bool:
    return any(judged.match(rest[m.end():m.end() + 40]) is None for m in _THEN.finditer(rest))


def _conditional(head: str, rest: str, before: str, sent: str, letters: bool) -> bool:
    m = (_CONDITION_LETTERS if letters else _CONDITION).match(head)
    return (m is not None and not (letters and _LATE.search(m.group("tail")))
            and not _scripted(before, sent, m, rest, letters))


def said_of_the_send(after: str, *, before: str = "", sent: str = "", letters: bool = False) -> bool:
    """Whether ``after`` (what follows a matched send of a secret, on its line) makes the send
    the subject of a verdict that forbids it, or the time of a precaution: the text speaks of the
    send and orders none. ``before`` (what precedes it on its line) may deny the verdict by a
    rhetorical question ("谁说…", or "谁说过，…" opening an earlier clause). A consequence clause
    that says the harm the send does ("…，对方就能登录你的账号") makes it a condition, unless
    ``sent`` (the matched send) goes to the writer ("发你的密码给我，…"). ``letters`` for a
    letters-only view (no marks: the verdict ends
    the text or a precaution's clause opens after it). Never when the rest of the line (160
    characters) sends to the writer, holds an address (a domain too), names how or where to send by
    what the writer points at ("请用这个链接", "回复本邮件") or by an ordinary channel ending the
    sentence ("请用微信"), or sends again unjudged ("然后发给客服"); nor when the verdict is denied
    or judges not sending ("不是违规的", "不发也不行")."""
    head, rest = after[:40], after[:160]
    judged, timed = (_JUDGED_LETTERS, _TIMED_LETTERS) if letters else (_JUDGED, _TIMED)
    asked = _ASKED_SAFE_LETTERS if letters else _ASKED_SAFE
    spoken = (((judged.match(head) is not None or asked.match(head) is not None)
               and _RHETORICAL.search(before[-16:]) is None)
              or timed.match(head) is not None
              or ("我" not in sent and "过来" not in sent and "過來" not in sent
                  and _conditional(head, rest, before, sent, letters)))
    return (spoken and _TO_WRITER.search(rest) is None and not _by_channel(rest)
            and ("." not in rest or DOMAIN.search(rest) is None) and not _sent_then(rest, judged))
