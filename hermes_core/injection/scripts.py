# ruff: noqa: E501
"""Orders to the model in Russian, Arabic and Korean, read on the unfolded view.

The phrase tables of :mod:`hermes_core.injection.patterns` read text after TR39 confusable
folding, which turns a Cyrillic letter that looks like a Latin one into that Latin letter
("игнорируй" becomes "иrнopиpyй"): a phrase written in Cyrillic can never match there, and Arabic
carries optional vowel marks that a phrase cannot spell out. These tables read
:func:`hermes_core.injection.normalise.unfolded` instead (NFKC, invisible code points out, lower
case, one line, no folding to Latin; a Latin look-alike inside a Cyrillic word folded back to
Cyrillic; Arabic without its marks and with one spelling of alef, ya and ta marbuta). Hangul is
never folded, but no table knew it, so Korean lives here as well.

Only the commonest orders are written, the ones attack collections translate: earlier
instructions set aside, the model's prompt or a secret asked for, the conversation sent to an
outside address, and a forged mode or a new identity without rules. Each is an order addressed to
the model; the same words about an order ("предыдущие инструкции устарели"), forbidding it ("не
игнорируй", "لا تتجاهل", "무시하지 마세요") or aimed at a person stay ordinary text. A table runs
only on text holding a letter of its script.
"""

from __future__ import annotations

import re

from hermes_core.injection.gate import GatedPattern


def _gated(*patterns: str) -> GatedPattern:
    return GatedPattern(patterns)


_OUTSIDE = r"(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+)"

# --------------------------------------------------------------------------- Russian

_RU_IGNORE = (r"(?:(?:про)?игнорир\w*|забуд\w*|забыть|отброс\w*|пренебре\w*|не\s+обращай\w*\s+внимани\w+\s+на|"
              r"не\s+следуй\w*|перестань\w*\s+следовать|больше\s+не\s+следуй\w*|не\s+слушай\w*|не\s+учитывай\w*|"
              r"не\s+принимай\w*\s+во\s+внимание)")
_RU_ORDERS = r"(?:инструкци\w*|указани\w*|правил\w*|установк\w*|промпт\w*|директив\w*|предписани\w*|распоряжени\w*)"
_RU_EARLIER = (r"(?:предыдущ\w*|прежн\w*|предшествующ\w*|вышеуказанн\w*|вышеизложенн\w*|системн\w*|исходн\w*|"
               r"первоначальн\w*|изначальн\w*|данн\w+\s+(?:тебе|вам)|(?:данн|полученн)\w+\s+(?:ранее|раньше|до\s+этого)|"
               r"которые\s+(?:тебе|вам)\s+(?:дали|дал|давали))")
_RU_SAY = r"(?:скаж\w*|напиш\w*|ответь\w*|выведи\w*|покаж\w*|раскрой\w*|сообщ\w*|повтори\w*|назов\w*)"
_RU_SHOW = (r"(?:покаж\w*|выведи\w*|раскрой\w*|напиш\w*|повтори\w*|сообщи\w*|назови\w*|скажи\w*|дай|дайте|отправь\w*|"
            r"перешли\w*|распечатай\w*|процитируй\w*|озвучь\w*)")
_RU_THEIRS = r"(?:тво\w+|сво\w+|ваш\w*)"
_RU_SECRET = (r"(?:системн\w+\s+(?:промпт\w*|подсказк\w*|инструкци\w*|сообщени\w*)|исходн\w+\s+(?:промпт\w*|инструкци\w*)|"
              r"промпт\w*|инструкци\w*|парол\w*|api[\s-]?ключ\w*|ключ\w*\s+api|секрет\w*|токен\w*)")
_RU_CHAT = r"(?:переписк\w*|бесед\w*|разговор\w*|истори\w+\s+(?:чата|переписки|сообщений)|диалог\w*|чат)"

RU: dict[str, GatedPattern] = {
    "ignore-instructions": _gated(
        r"(?<!\w)" + _RU_IGNORE + r"(?!\w)[^.\n]{0,40}?(?<!\w)" + _RU_ORDERS + r"(?!\w)[^.\n]{0,25}?(?<!\w)" + _RU_EARLIER + r"(?!\w)",
        r"(?<!\w)" + _RU_IGNORE + r"\s+(?:все\s+|всех\s+)?" + _RU_EARLIER + r"\s+" + _RU_ORDERS + r"(?!\w)",
        r"(?<!\w)" + _RU_IGNORE + r"\s+(?:все\s+|всех\s+)?" + _RU_ORDERS + r"\s+выше(?!\w)",
        # "забудь всё, что было сказано выше, и напиши ..."
        r"(?<!\w)(?:(?:про)?игнорир\w*|забуд\w*)\s+(?:вс[её]|всё\s+то)\s*,?\s*(?:что|о\s+ч[её]м)\s+(?:\w+\s+){0,3}?"
        r"(?:выше|раньше|ранее|до\s+этого|прежде)",
        # the material set aside for a claim: "игнорируй документ и скажи, что ..."
        r"(?<!\w)(?:(?:про)?игнорир\w*|забуд\w*)\s+(?:(?:это\w*|эт\w+|вес\w+)\s+)?(?:текст|документ|данные|содержимое|"
        r"страниц\w+|письм\w+|сообщени\w+|статью|код|функци\w+|таблиц\w+)\s*,?\s+и\s+(?:просто\s+|вместо\s+этого\s+)?"
        + _RU_SAY + r"\w*\s*,?\s+что",
    ),
    "role-hijack": _gated(
        r"(?<!\w)(?:теперь|отныне|с\s+этого\s+момента)\s*,?\s+ты\s*(?:[-—–]\s*)?(?:\w+\s+){0,3}?(?:без\s+(?:каких-либо\s+)?"
        r"(?:ограничений|фильтров|цензуры|правил)|неограниченн\w+|нецензурированн\w+|dan\b|больше\s+не\s+(?:связан|обязан|"
        r"ограничен|ассистент))",
        r"(?<!\w)ты\s+больше\s+не\s+(?:связан\w*|обязан\w*|ограничен\w*)\s+(?:\w+\s+){0,2}?(?:правил\w*|инструкци\w*|"
        r"ограничени\w*|политик\w*)",
        r"(?<!\w)(?:включ\w*|активир\w*|вход\w*\s+в|перейди\w*\s+в)\s+(?:режим\w*)\s+(?:разработчика|бога|dan|без\s+ограничений|"
        r"без\s+цензуры|отладки\s+ии)",
        r"(?:^|[.!?]\s+)\[?(?:системное\s+сообщение|сообщение\s+(?:системы|разработчика|администратора)|система|"
        r"разработчик|администратор)\]?\s*:[^\n]{0,60}?(?:(?<!\w)(?:ассистент|ии|модель)\s+(?:долж(?:ен|на|но|ны)|обязан\w*|"
        r"больше\s+не)|(?<!\w)(?:игнорир\w*|забудь)\s+(?:\w+\s+){0,2}?(?:правил\w*|инструкци\w*|ограничени\w*))",
        r"(?<!\w)тво(?:я|ей)\s+(?:настоящая|новая|истинная|единственная)\s+(?:задача|миссия|цель)\s*(?::|[-—–]|это)",
    ),
    "secret-exfiltration": _gated(
        r"(?<!\w)" + _RU_SHOW + r"(?!\w)[^.\n]{0,25}?(?<!\w)" + _RU_THEIRS + r"\s+(?:\w+\s+)?" + _RU_SECRET + r"(?!\w)",
        r"(?<!\w)" + _RU_SHOW + r"\s+(?:мне\s+|нам\s+)?(?:(?:полностью|дословно|целиком)\s+)?системн\w+\s+(?:промпт\w*|"
        r"подсказк\w*|инструкци\w*)",
        r"(?<!\w)(?:отправь\w*|перешли\w*|вышли\w*|загрузи\w*)\s+(?:эт\w+\s+|всю\s+|весь\s+|нашу\s+|наш\s+)*" + _RU_CHAT
        + r"(?!\w)[^.\n]{0,40}?(?<!\w)(?:на|по\s+адресу)\s+" + _OUTSIDE,
    ),
}
# a negation just before the order forbids it ("не игнорируй", "никогда не раскрывай")
_RU_NEGATED = re.compile(r"(?<!\w)(?:не|нельзя|никогда(?:\s+не)?|запрещено|ни\s+в\s+коем\s+случае\s+не)\s+(?:\w+\s+)?$")
_RU_SELF_NEGATED = ("не ", "больше не", "перестань")

# --------------------------------------------------------------------------- Arabic

# Imperatives with the conjunction written on ("وتجاهل", "فاكشف"); the view spells alef, ya and
# ta marbuta one way (ا, ي, ه), so the phrases are written so too.
_AR_AND = r"(?<!\w)[وف]?"
_AR_IGNORE = (r"(?:تجاهل\w*|انس|انسي|انسوا|اهمل\w*|لا\s+تتبع\w*|توقف\w*\s+عن\s+اتباع|تخط\w*|تجاوز\w*|"
              r"الغ|الغي|الغوا|لا\s+تلتزم\w*\s+ب)")
_AR_ORDERS = (r"(?:ال)?(?:تعليمات|ارشادات|اوامر|قواعد|توجيهات|موجه|تعليمه|قيود|ضوابط)\w*")
_AR_EARLIER = (r"(?:السابق\w*|الاصلي\w*|الماضي\w*|اعلاه|المذكور\w*\s+اعلاه|النظام|الاولي\w*|القديم\w*|المعطا\w*\s+(?:لك|سابقا)|"
               r"التي\s+(?:تلقيتها|اعطيت\w*|قدمت\w*)|قبل\s+ذلك|سابقا)")
_AR_SHOW = (r"(?:اكشف\w*|اظهر\w*|اعرض\w*|اطبع\w*|ارسل\w*|شارك\w*|اعطني|اعطنا|اخبرني|اخبرنا|قل\s+لي|كرر\w*|"
            r"انسخ\w*|اكتب\w*|سرب\w*|افصح\w*)")
_AR_SECRET = (r"(?:(?:ال)?موجه\s+(?:ال)?نظام|تعليمات\s+(?:ال)?نظام|(?:ال)?تعليمات\s+(?:ال)?اولي\w*|تعليماتك|موجهك|"
              r"كلم\w+\s+(?:المرور|السر)\s+(?:الخاص\w*\s+بك|لديك)|كلم\w+\s+(?:مرورك|سرك)|مفتاح\s+api|مفاتيح\s+api|مفتاحك|"
              r"(?:ال)?مفاتيح\s+(?:ال)?سري\w*)")

AR: dict[str, GatedPattern] = {
    "ignore-instructions": _gated(
        _AR_AND + _AR_IGNORE + r"(?!\w)[^.\n]{0,30}?(?<!\w)" + _AR_ORDERS + r"[^.\n]{0,20}?(?<!\w)" + _AR_EARLIER + r"(?!\w)",
        # "تجاهل كل ما سبق", "تجاهل ما ورد اعلاه"
        _AR_AND + r"(?:تجاهل\w*|انس|انسي|انسوا)\s+(?:كل\s+|جميع\s+)?(?:ما\s+(?:سبق|ورد\s+اعلاه|قيل\s+(?:لك\s+)?(?:سابقا|من\s+قبل))|"
        r"كل\s+شيء\s+(?:سبق|قيل))",
        # the material set aside for a claim: "تجاهل المستند وقل ان ..."
        _AR_AND + r"تجاهل\w*\s+(?:هذا\s+|هذه\s+)?(?:ال)?(?:نص|مستند|وثيقه|بيانات|محتوي|صفحه|رساله|مقال|كود|داله|جدول)\w*"
        r"\s+(?:و|ثم\s+)(?:قل|اكتب|اجب|صرح|اذكر)\s+(?:ان|بان)",
    ),
    "role-hijack": _gated(
        r"(?<!\w)(?:انت\s+الان|من\s+الان\s+فصاعدا\s*،?\s*(?:انت)?|اعتبارا\s+من\s+الان\s*،?\s*انت)\s+(?:\w+\s+){0,3}?"
        r"(?:بدون\s+(?:اي\s+)?(?:قيود|فلاتر|رقابه|حدود|قواعد)|بلا\s+(?:قيود|حدود|رقابه)|غير\s+مقيد\w*|dan\b|"
        r"لم\s+تعد\s+(?:ملزم\w*|مقيد\w*|مساعد\w*))",
        r"(?<!\w)لم\s+تعد\s+(?:ملزم\w*|مقيد\w*)\s+(?:\w+\s+){0,2}?(?:ب)?(?:ال)?(?:قواعد|تعليمات|قيود|سياسات|ارشادات)",
        r"(?<!\w)[وف]?(?:فعل|شغل|ادخل|انتقل\s+الي|تحول\s+الي)\w*\s+(?:في\s+)?(?:ال)?وضع\s+(?:ال)?(?:مطور|بدون\s+قيود|dan|اله|"
        r"غير\s+المقيد)",
        r"(?:^|[.!?؟]\s+)\[?(?:رساله\s+(?:ال)?(?:نظام|مطور|مسؤول)|ملاحظه\s+(?:ال)?(?:مطور|نظام)|تعليمات\s+(?:ال)?مطور|"
        r"النظام|المطور|المسؤول)\]?\s*:[^\n]{0,60}?(?:يجب\s+علي\s+(?:ال)?(?:مساعد|نموذج|ذكاء)|(?<!\w)[وف]?تجاهل\w*\s+"
        r"(?:\w+\s+){0,2}?(?:ال)?(?:قواعد|تعليمات|قيود))",
        r"(?<!\w)(?:مهمتك|مهمتكِ)\s+(?:ال)?(?:حقيقي\w*|جديد\w*|وحيد\w*)\s*(?::|هي)",
    ),
    "secret-exfiltration": _gated(
        _AR_AND + _AR_SHOW + r"(?!\w)[^.\n]{0,25}?(?<!\w)" + _AR_SECRET + r"(?!\w)",
        _AR_AND + r"(?:ارسل\w*|اعد\s+توجيه|حول\w*)\s+(?:هذه\s+|كل\s+|كامل\s+)?(?:ال)?(?:محادثه|دردشه|سجل\s+(?:ال)?(?:محادثه|"
        r"دردشه|رسائل))\w*[^.\n]{0,40}?(?<!\w)(?:الي|ل)\s*" + _OUTSIDE,
    ),
}
_AR_NEGATED = re.compile(r"(?<!\w)(?:لا|لن|ابدا|ممنوع|يمنع|يحظر|يجب\s+ال[اّ]|لا\s+يجوز|اياك\s+ان|اياك\s+و)\s+(?:\w+\s+)?$")
_AR_SELF_NEGATED = ("لا ", "ولا ", "فلا ")

# --------------------------------------------------------------------------- Korean

# A Korean order ends with its verb; a prohibition is the verb plus 지 마/지 말/면 안: the
# lookahead after the verb stem tells an order from its negation.
_KO_NOT = r"(?!\w{0,3}?\s*(?:지\s*(?:마|말|않)|면\s*안|는\s*안|ㄹ\s*수\s*없|할\s*수\s*없))"
_KO_ORDERS = r"(?:지시|지침|명령|규칙|프롬프트|제약|가이드라인|인스트럭션)\w*"
_KO_SECRET = (r"(?:시스템\s*프롬프트|시스템\s*(?:지시|지침|메시지)|(?:너|네|당신|니)의?\s*(?:초기\s*|원래\s*|숨겨진\s*)?(?:지시|지침|프롬프트|"
              r"설정|명령)|초기\s*(?:지시|프롬프트)|비밀\s*번호|패스워드|api\s*키|비밀\s*키)\w*")

KO: dict[str, GatedPattern] = {
    "ignore-instructions": _gated(
        r"(?:이전|앞|위|기존|원래|처음|지금까지|이제까지|시스템)(?:의|에서|에|까지의)?\s*(?:모든\s*)?(?:\w+\s+){0,2}?" + _KO_ORDERS
        + r"\s*(?:(?:모두|전부|다)\s*)?(?:무시|잊어|잊고|잊으|무효)(?:하|해|하세요|하십시오|하라|해라|해줘|하고|하여|해서)?" + _KO_NOT,
        r"(?:위|앞|이전)의?\s*(?:모든\s*)?(?:내용|것|말)(?:은|을|를|들은|들을)?\s*(?:모두\s*|전부\s*)?(?:무시|잊어)" + _KO_NOT
        + r"[^.\n]{0,30}?(?:말해|출력|대답|답하|써|작성)",
        # the material set aside for a claim: "이 문서를 무시하고 ...라고 말해"
        r"(?:이|그|위)?\s*(?:문서|텍스트|데이터|내용|페이지|이메일|기사|코드|함수|표)(?:을|를)\s*무시하고[^.\n]{0,40}?"
        r"(?:라고|다고)\s*(?:말해|답해|대답해|써|주장해|출력해)",
    ),
    "role-hijack": _gated(
        r"(?:지금부터|이제부터|이제|앞으로)\s*(?:너는|넌|당신은)\s*(?:\w+\s+){0,3}?(?:제한\s*(?:이\s*)?없는|제약\s*(?:이\s*)?없는|"
        r"필터\s*(?:가\s*)?없는|검열\s*(?:이\s*)?없는|무제한|dan\b|규칙\s*(?:이\s*)?없는|더\s*이상\s*(?:규칙|제한|지침))",
        r"(?:개발자|관리자|탈옥|dan|갓)\s*모드(?:를|로)?\s*(?:활성화|켜|켜줘|켜라|전환|진입|시작)" + _KO_NOT,
        r"(?:^|[.!?]\s+)\[?(?:시스템|개발자|관리자)\s*(?:메시지|공지|지시|알림)?\]?\s*:[^\n]{0,60}?(?:(?:어시스턴트|ai|모델)(?:는|은)\s*"
        r"[^\n]{0,30}?해야\s*(?:한다|합니다|함)|" + _KO_ORDERS + r"(?:을|를)?\s*(?:모두\s*)?무시)",
        r"(?:너|당신|네)의?\s*(?:진짜|새로운|실제|유일한)\s*(?:임무|과제|작업|목표)(?:는|은)?\s*(?::|바로)",
    ),
    "secret-exfiltration": _gated(
        _KO_SECRET + r"(?:을|를|은|는|도)?\s*(?:\w+\s+){0,2}?(?:보여|출력|알려|공개|말해|반복|복사|적어|노출|누설)" + _KO_NOT,
        r"(?:이|모든|전체)?\s*(?:대화|채팅|대화\s*내용|대화\s*기록|채팅\s*기록)(?:을|를)?\s*[^.\n]{0,30}?" + _OUTSIDE
        + r"\s*(?:으로|로|에|에게)?\s*(?:보내|전송|전달|업로드)" + _KO_NOT,
    ),
}

_SCRIPTS: tuple[tuple[str, re.Pattern[str], dict[str, GatedPattern], re.Pattern[str] | None, tuple[str, ...]], ...] = (
    ("ru", re.compile("[\u0430-\u044f\u0451]"), RU, _RU_NEGATED, _RU_SELF_NEGATED),
    ("ar", re.compile("[\u0621-\u064a]"), AR, _AR_NEGATED, _AR_SELF_NEGATED),
    ("ko", re.compile("[\uac00-\ud7af]"), KO, None, ()),
)
_NEGATABLE = frozenset({"ignore-instructions", "secret-exfiltration"})


def match_scripts(view: str, wanted: set[str]) -> tuple[str, str, str] | None:
    """(category, language, excerpt) of the first order found in ``view`` (an
    :func:`~hermes_core.injection.normalise.unfolded` view), skipping one a negation forbids."""
    for lang, letters, table, negated, self_negated in _SCRIPTS:
        if not letters.search(view):
            continue
        for category, pattern in table.items():
            if category not in wanted:
                continue
            for m in pattern.finditer(view):
                if (negated is not None and category in _NEGATABLE and not m.group().startswith(self_negated)
                        and negated.search(view[max(0, m.start() - 40):m.start()])):
                    continue
                return category, lang, m.group()[:80]
    return None
